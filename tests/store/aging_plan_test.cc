// The aging rule as a pure plan: which directories of one class go, given the oldest-first
// list, the pins and the limit. No disk, no socket.
#include <catch2/catch.hpp>

#include <vector>

#include "atraced/store/aging.h"

using namespace atraced;

namespace {
struct Dir {
  uint64_t seq;
  bool pinned = false;
};

std::vector<uint64_t> Plan(const std::vector<Dir>& dirs, size_t limit) {
  auto victims = PlanAging(dirs.begin(), dirs.end(), dirs.size(), limit, [](const Dir& d) { return !d.pinned; });
  std::vector<uint64_t> out;
  for (auto it : victims) out.push_back(it->seq);
  return out;
}

std::vector<Dir> Seqs(uint64_t n) {
  std::vector<Dir> v;
  for (uint64_t i = 1; i <= n; ++i) v.push_back({i});
  return v;
}
}  // namespace

TEST_CASE("at or under the limit nothing is removed", "[aging]") {
  CHECK(Plan(Seqs(0), 10).empty());
  CHECK(Plan(Seqs(9), 10).empty());
  CHECK(Plan(Seqs(10), 10).empty());
}

TEST_CASE("one over the limit removes exactly the oldest", "[aging]") {
  CHECK(Plan(Seqs(11), 10) == std::vector<uint64_t>{1});
}

TEST_CASE("far over the limit removes the oldest excess, oldest first", "[aging]") {
  CHECK(Plan(Seqs(15), 10) == std::vector<uint64_t>{1, 2, 3, 4, 5});
  auto limit = GENERATE(10u, 100u, 1000u);
  auto plan = Plan(Seqs(limit + 3), limit);
  CHECK(plan == std::vector<uint64_t>{1, 2, 3});
}

TEST_CASE("pinned directories are skipped for the next oldest", "[aging]") {
  auto dirs = Seqs(12);
  dirs[0].pinned = true;  // seq 1 is being written
  CHECK(Plan(dirs, 10) == std::vector<uint64_t>{2, 3});
}

TEST_CASE("the directory being created is never the victim", "[aging]") {
  // Limit 10 with 11 entries where only the newest (being created, pinned) and the rest
  // pinned: nothing can go, and the class stays over its limit for now.
  auto dirs = Seqs(11);
  for (auto& d : dirs) d.pinned = true;
  CHECK(Plan(dirs, 10).empty());
  dirs[5].pinned = false;
  CHECK(Plan(dirs, 10) == std::vector<uint64_t>{6});
}

TEST_CASE("the plan follows list order, not the numbers' size", "[aging]") {
  // The caller's order is the creation order; the plan must not re-sort.
  std::vector<Dir> dirs{{30}, {10}, {20}};
  CHECK(Plan(dirs, 1) == std::vector<uint64_t>{30, 10});
}

namespace {
std::vector<size_t> ByPolicy(AgingPolicy policy, const std::vector<AgingCandidate>& pool, size_t count) {
  return PlanByPolicy(policy, pool, [count](size_t n, uint64_t) { return n >= count; });
}
}  // namespace

TEST_CASE("fair takes from the group holding the most, oldest first, and ties go to the older", "[aging]") {
  // Oldest first: group 1 once, group 7 three times, group 2 once.
  std::vector<AgingCandidate> pool{{10, 1, true}, {10, 7, true}, {10, 7, true}, {10, 7, true}, {10, 2, true}};
  CHECK(ByPolicy(AgingPolicy::kFifo, pool, 2) == std::vector<size_t>{0, 1});
  CHECK(ByPolicy(AgingPolicy::kFair, pool, 2) == std::vector<size_t>{1, 2});
  // After two, group 7 holds one like the others: the oldest of them, group 1's, is next.
  CHECK(ByPolicy(AgingPolicy::kFair, pool, 3) == std::vector<size_t>{1, 2, 0});
}

TEST_CASE("fair never takes a pinned dir, but pinned ones count for their group", "[aging]") {
  std::vector<AgingCandidate> pool{{10, 1, true}, {10, 7, false}, {10, 7, false}, {10, 7, true}, {10, 2, true}};
  CHECK(ByPolicy(AgingPolicy::kFair, pool, 1) == std::vector<size_t>{3});
  // Asked for more than is removable: all removable ones, and no more.
  CHECK(ByPolicy(AgingPolicy::kFair, pool, 9).size() == 3);
  CHECK(ByPolicy(AgingPolicy::kFifo, pool, 9) == std::vector<size_t>{0, 3, 4});
}

TEST_CASE("planning for bytes stops once enough are freed", "[aging]") {
  std::vector<AgingCandidate> pool{{100, 1, true}, {50, 1, true}, {500, 2, true}};
  auto plan = PlanByPolicy(AgingPolicy::kFifo, pool, [](size_t, uint64_t bytes) { return bytes >= 120; });
  CHECK(plan == std::vector<size_t>{0, 1});
}

TEST_CASE("aging policy and reason names", "[aging]") {
  CHECK(ParseAgingPolicy("fair") == AgingPolicy::kFair);
  CHECK(ParseAgingPolicy("fifo") == AgingPolicy::kFifo);
  CHECK_FALSE(ParseAgingPolicy("FIFO"));
  CHECK(std::string(AgingReasonName(AgingReason::kMaxUse)) == "bytes");
  CHECK(std::string(AgingReasonName(AgingReason::kKeepFree)) == "keep-free");
}
