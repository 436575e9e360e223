// The byte limits as pure functions: size settings, what must be freed for max-use and
// keep-free (each reached exactly, and in each order), and the byte plan with pins and
// exit dirs last. No disk: the figures are made up.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "atraced/store/byte_budget.h"

using namespace atraced;

namespace {
constexpr uint64_t kGiB = 1ull << 30;

struct Dir {
  uint64_t seq;
  uint64_t bytes;
  bool pinned = false;
};

struct Planned {
  std::vector<uint64_t> seqs;
  uint64_t freed;
};

Planned Plan(const std::vector<Dir>& dirs, uint64_t need) {
  auto plan = PlanByteAging(dirs.begin(), dirs.end(), need, [](const Dir& d) { return d.bytes; },
                            [](const Dir& d) { return !d.pinned; });
  Planned out{{}, plan.freed};
  for (auto it : plan.victims) out.seqs.push_back(it->seq);
  return out;
}
}  // namespace

TEST_CASE("size settings take journald's suffixes", "[bytes]") {
  CHECK(ParseSizeSpec("0") == SizeSpec{0, false});
  CHECK(ParseSizeSpec("4096") == SizeSpec{4096, false});
  CHECK(ParseSizeSpec("1K") == SizeSpec{1024, false});
  CHECK(ParseSizeSpec("64M") == SizeSpec{64ull << 20, false});
  CHECK(ParseSizeSpec("4G") == SizeSpec{4 * kGiB, false});
  CHECK(ParseSizeSpec("2T") == SizeSpec{2ull << 40, false});
  CHECK(ParseSizeSpec("15%") == SizeSpec{15, true});
  CHECK(ParseSizeSpec("100%") == SizeSpec{100, true});
  CHECK(ParseSizeSpec("0%") == SizeSpec{0, true});
  CHECK(ParseSizeSpec("18446744073709551615") == SizeSpec{UINT64_MAX, false});
}

TEST_CASE("malformed size settings are refused", "[bytes]") {
  auto text = GENERATE(as<std::string>{}, "", "K", "%", "-1", "+1", "1.5G", "1KB", "1k", "1 G", " 1", "101%",
                       "1e3", "16777216T", "18446744073709551616", "4G%", "0x10");
  CAPTURE(text);
  CHECK_FALSE(ParseSizeSpec(text));
}

TEST_CASE("percentages resolve against the file system and the defaults are capped", "[bytes]") {
  CHECK(ResolveSize({10, true}, 1000) == 100);
  CHECK(ResolveSize({15, true}, 1099) == 164);  // floor(1099 * 0.15)
  CHECK(ResolveSize({100, true}, UINT64_MAX) == UINT64_MAX);
  CHECK(ResolveSize({4096, false}, 1) == 4096);  // bytes are taken as written
  CHECK(DefaultMaxUse(1000 * 1000) == 100 * 1000);
  CHECK(DefaultKeepFree(1000 * 1000) == 150 * 1000);
  CHECK(DefaultMaxUse(100 * kGiB) == 4 * kGiB);     // 10 GiB capped
  CHECK(DefaultKeepFree(100 * kGiB) == 4 * kGiB);   // 15 GiB capped
  CHECK(DefaultMaxUse(40 * kGiB) == 4 * kGiB);      // exactly at the cap
}

TEST_CASE("max-use reached exactly asks for nothing, one byte over asks for one", "[bytes]") {
  // used + incoming vs max-use = 1000; plenty free.
  CHECK(BytesToFree(1000, 0, 1000, 1'000'000, 0).bytes == 0);
  CHECK(BytesToFree(900, 100, 1000, 1'000'000, 0).bytes == 0);
  auto n = BytesToFree(900, 101, 1000, 1'000'000, 0);
  CHECK(n.bytes == 1);
  CHECK(n.limit == ByteLimit::kMaxUse);
  CHECK(BytesToFree(5000, 0, 1000, 1'000'000, 0).bytes == 4000);  // lowered budget
}

TEST_CASE("keep-free reached exactly asks for nothing, one byte under asks for one", "[bytes]") {
  // free after the write vs keep-free = 500; budget out of the way.
  CHECK(BytesToFree(0, 100, UINT64_MAX, 600, 500).bytes == 0);
  auto n = BytesToFree(0, 101, UINT64_MAX, 600, 500);
  CHECK(n.bytes == 1);
  CHECK(n.limit == ByteLimit::kKeepFree);
  CHECK(BytesToFree(0, 0, UINT64_MAX, 0, 500).bytes == 500);  // a full disk
}

TEST_CASE("with both limits crossed the larger need wins, in either order", "[bytes]") {
  SECTION("max-use first") {
    auto n = BytesToFree(1300, 0, 1000, 450, 500);  // 300 over budget, 50 short of free
    CHECK(n.bytes == 300);
    CHECK(n.limit == ByteLimit::kMaxUse);
  }
  SECTION("keep-free first") {
    auto n = BytesToFree(1050, 0, 1000, 200, 500);  // 50 over budget, 300 short of free
    CHECK(n.bytes == 300);
    CHECK(n.limit == ByteLimit::kKeepFree);
  }
  SECTION("a tie names max-use") {
    auto n = BytesToFree(1100, 0, 1000, 400, 500);
    CHECK(n.bytes == 100);
    CHECK(n.limit == ByteLimit::kMaxUse);
  }
  SECTION("no overflow at the extremes") {
    CHECK(BytesToFree(UINT64_MAX, UINT64_MAX, UINT64_MAX, 0, UINT64_MAX).bytes == UINT64_MAX);
  }
}

TEST_CASE("the byte plan takes the oldest until enough is freed", "[bytes]") {
  std::vector<Dir> dirs{{1, 100}, {2, 300}, {3, 50}, {4, 1000}};
  CHECK(Plan(dirs, 0).seqs.empty());
  CHECK(Plan(dirs, 100).seqs == std::vector<uint64_t>{1});          // exactly one dir's bytes
  CHECK(Plan(dirs, 101).seqs == std::vector<uint64_t>{1, 2});
  CHECK(Plan(dirs, 101).freed == 400);
  CHECK(Plan(dirs, 1450).seqs == std::vector<uint64_t>{1, 2, 3, 4});
}

TEST_CASE("the byte plan skips pinned dirs and reports a shortfall instead of taking them", "[bytes]") {
  std::vector<Dir> dirs{{1, 5000, true}, {2, 100}, {3, 100, true}, {4, 100}};
  auto p = Plan(dirs, 150);
  CHECK(p.seqs == std::vector<uint64_t>{2, 4});
  auto all = Plan(dirs, 1000);  // only pinned data is left over the budget: the caller refuses
  CHECK(all.seqs == std::vector<uint64_t>{2, 4});
  CHECK(all.freed == 200);
  for (auto& d : dirs) d.pinned = true;
  CHECK(Plan(dirs, 1).seqs.empty());
}

TEST_CASE("exit dirs are aged for bytes last: a second plan for what is left", "[bytes]") {
  std::vector<Dir> counted{{2, 100}, {5, 100}};  // host and device, merged by creation
  std::vector<Dir> exits{{1, 400}, {3, 400}};    // older, yet taken only after the others
  const uint64_t need = 300;
  auto first = Plan(counted, need);
  CHECK(first.seqs == std::vector<uint64_t>{2, 5});
  auto second = Plan(exits, need - first.freed);
  CHECK(second.seqs == std::vector<uint64_t>{1});
  // When the counted classes suffice, no exit dir is touched.
  CHECK(Plan(counted, 150).freed >= 150);
}

TEST_CASE("limit names are the configuration keys", "[bytes]") {
  CHECK(std::string(ByteLimitName(ByteLimit::kMaxUse)) == "max-use");
  CHECK(std::string(ByteLimitName(ByteLimit::kKeepFree)) == "keep-free");
}
