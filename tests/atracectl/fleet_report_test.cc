// The hang report's model (client/atracectl/fleet/fleet_report.h): claims in, conflicts,
// world size, missing ranks, classes and culprits out.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fleet/fleet_groups.h"
#include "fleet/fleet_report.h"

using namespace atracectl;

namespace {

RankClaim Claim(int64_t rank, std::optional<uint32_t> uid, const char* where, int64_t world = 4) {
  RankClaim c;
  c.rank = rank;
  c.world_size = world;
  c.uid = uid;
  c.host = "n" + std::to_string(rank / 2);
  c.pid = static_cast<int32_t>(1000 + rank);
  c.stacks = {ThreadFrames{c.pid, {where, "main"}}};
  c.last["CANN_API"] = {rank * 10, "r"};
  return c;
}

}  // namespace

TEST_CASE("fleet report: classes smallest first, the smallest named culprits, oldest last record", "[atracectl][fleet]") {
  std::vector<RankClaim> claims;
  for (int64_t r = 0; r < 4; ++r) claims.push_back(Claim(r, 1000, r == 2 ? "load" : "allreduce"));
  FleetReport report(100);
  Classify(claims, 1, &report);
  CHECK(report.job_uid == 1000u);
  CHECK(report.world_size == 4);
  CHECK(report.missing_count == 0);
  REQUIRE(report.classes.size() == 2);
  CHECK(report.classes[0].ranks == std::vector<int64_t>{2});
  CHECK(report.classes[1].ranks == std::vector<int64_t>{0, 1, 3});
  CHECK(report.culprits == std::vector<int64_t>{2});
  CHECK(report.oldest == std::vector<int64_t>{0});
  CHECK(report.unranked == 1);
}

TEST_CASE("fleet report: a rank two processes claim is a conflict, the job's uid's claimant used, else none",
          "[atracectl][fleet][security]") {
  std::vector<RankClaim> claims;
  for (int64_t r = 0; r < 4; ++r) claims.push_back(Claim(r, 1000, r == 2 ? "load" : "allreduce"));
  claims.push_back(Claim(2, 2000, "allreduce", 16777216));  // another user's rank 2, world size 16777216
  FleetReport report(100);
  Classify(claims, 0, &report);
  REQUIRE(report.conflicts.size() == 1);
  CHECK(report.conflicts[0].rank == 2);
  CHECK(report.conflicts[0].claimants.size() == 2);
  REQUIRE(report.conflicts[0].used != nullptr);
  CHECK(report.conflicts[0].used->uid == 1000u);
  CHECK(ClaimantText(*report.conflicts[0].claimants[1]) == "uid 2000, n1, pid 1002");
  CHECK(report.culprits == std::vector<int64_t>{2});  // not hidden by the other claimant
  CHECK(report.world_size == 4);                       // the other uid's label is not counted
  CHECK(report.world_size_claims.size() == 1);
  // Two claimants of the job's uid: none is used, the rank is missing, never merged.
  claims.push_back(Claim(1, 1000, "elsewhere"));
  FleetReport both(100);
  Classify(claims, 0, &both);
  REQUIRE(both.conflicts.size() == 2);
  CHECK(both.conflicts[0].rank == 1);
  CHECK(both.conflicts[0].used == nullptr);
  CHECK(both.seen == std::vector<int64_t>{0, 2, 3});
  CHECK(both.missing == "1");
}

TEST_CASE("fleet report: missing ranks as ranges from a world size, never rank by rank", "[atracectl][fleet]") {
  std::vector<RankClaim> claims{Claim(0, 1, "w", 16777216), Claim(5, 1, "w", 16777216), Claim(7, 1, "w", 16777216)};
  FleetReport report(100);
  Classify(claims, 0, &report);
  CHECK(report.missing == "1-4,6,8-16777215");
  CHECK(report.missing_count == 16777213);
  int64_t count = 0;
  CHECK(MissingRanges({0, 1, 2}, 3, 100, &count).empty());
  CHECK(count == 0);
  CHECK(RankRanges({0, 1, 2, 4, 6, 7}) == "0-2,4,6-7");
}
