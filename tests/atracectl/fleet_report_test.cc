// The hang report's model (client/atracectl/fleet/fleet_report.h): claims in, conflicts,
// world size, missing ranks, classes and culprits out.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "fleet/culprit.h"
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
  c.stacks = {ThreadFrames{c.pid, {where, "main"}, {std::string(where) + ".c:" + std::to_string(10 + rank), "main.c:40"}}};
  c.job = "J1";
  c.last["CANN_API"] = {rank * 10, "r"};
  return c;
}

AgedRank Aged(int64_t rank, const char* host, const char* reason, int64_t at_us, std::optional<uint32_t> uid = std::nullopt) {
  AgedRank a;
  a.rank = rank;
  a.host = host;
  a.reason = reason;
  a.at_us = at_us;
  a.uid = uid;
  return a;
}

}  // namespace

TEST_CASE("fleet report: classes smallest first, the smallest named culprits, first to stop per host", "[atracectl][fleet]") {
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
  // Each host's own clock: n0 holds ranks 0-1, n1 ranks 2-3; the hosts are never compared.
  CHECK(report.first_stopped == std::map<std::string, std::vector<int64_t>>{{"n0", {0}}, {"n1", {2}}});
  CHECK(report.unranked == 1);
}

TEST_CASE("culprit: the frame where the culprit's main thread parts from the largest other class, with its source "
          "line, host, pid and the next command",
          "[atracectl][fleet]") {
  std::vector<RankClaim> claims;
  for (int64_t r = 0; r < 4; ++r) claims.push_back(Claim(r, 1000, r == 2 ? "load" : "allreduce"));
  FleetReport report(100);
  Classify(claims, 0, &report);
  const std::vector<CulpritPlace> places = PlaceCulprits(report);
  REQUIRE(places.size() == 1);
  CHECK(places[0].rank == 2);
  CHECK(places[0].function == "load");
  CHECK(places[0].source == "load.c:12");
  CHECK(places[0].parts_from == "0-1,3");
  CHECK(CulpritLine(places[0], "blocked 30 s") ==
        "Culprit: job J1, rank 2, host n1, pid 1002 (blocked 30 s): parts from ranks 0-1,3 at load (load.c:12)\n");
  CHECK(NextCommand("n1", 1002, true) == "ssh n1 atracectl info 1002");
  CHECK(NextCommand("n1", 1002, false) == "ssh n1 atracectl dump 1002");
  // A host name that is no plain name is quoted, never pasted into the command as it is.
  CHECK(NextCommand("n1;reboot", 7, true) == "ssh 'n1;reboot' atracectl info 7");
  // A label or frame with terminal controls is escaped on the line.
  claims[2].job = "J\x1b[2J";
  claims[2].stacks[0].frames[0] = "lo\x1b]0;ad";
  FleetReport hostile(100);
  Classify(claims, 0, &hostile);
  const std::string line = CulpritLine(PlaceCulprits(hostile).at(0), "");
  CHECK(line.find('\x1b') == std::string::npos);
  CHECK(line.rfind("Culprit: job J\\x1b[2J, rank 2, host n1, pid 1002: parts from ranks 0-1,3 at lo\\x1b]0;ad (load.c:12)", 0) == 0);
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

TEST_CASE("fleet report: a rank with no claim and an aged dump is aged, not missing, the latest of each kept",
          "[atracectl][fleet][aged]") {
  std::vector<RankClaim> claims;
  for (int64_t r : {0, 2}) claims.push_back(Claim(r, 1000, "allreduce"));
  FleetReport report(100);
  Classify(claims, 0, &report);
  CHECK(report.missing == "1,3");
  const std::vector<AgedRank> aged{
      Aged(1, "n0", "count", 10, 1000u),
      Aged(1, "n0", "bytes", 20, 1000u),  // later: kept
      Aged(0, "n0", "bytes", 30, 1000u),  // claimed: stays seen
      Aged(3, "n1", "bytes", 40, 2000u),  // another uid's word: ignored
      Aged(7, "n1", "bytes", 50, 1000u),  // past the world size
      Aged(-1, "n1", "bytes", 60)};
  MarkAged(aged, &report);
  REQUIRE(report.aged.size() == 1);
  CHECK(report.aged[0].rank == 1);
  CHECK(report.aged[0].reason == "bytes");
  CHECK(report.aged[0].at_us == 20);
  CHECK(report.missing == "3");
  CHECK(report.missing_count == 1);
  CHECK(report.seen == std::vector<int64_t>{0, 2});

  // No world size labelled: every aged rank no process claims is named, none is missing.
  FleetReport unsized(100);
  RankClaim alone = Claim(0, std::nullopt, "allreduce");
  alone.world_size.reset();
  Classify({alone}, 0, &unsized);
  MarkAged({Aged(5, "n9", "keep-free", 1)}, &unsized);
  REQUIRE(unsized.aged.size() == 1);
  CHECK(unsized.missing_count == 0);

  // Bounded: at most kMaxAgedRanks ranks are held, whatever the input names.
  FleetReport huge(100);
  RankClaim big = Claim(0, 1000, "allreduce", 16777216);
  Classify({big}, 0, &huge);
  std::vector<AgedRank> flood;
  for (int64_t r = 1; r <= static_cast<int64_t>(kMaxAgedRanks) + 100; ++r) flood.push_back(Aged(r, "", "bytes", 0));
  MarkAged(flood, &huge);
  CHECK(huge.aged.size() == kMaxAgedRanks);
  CHECK(huge.missing_count == 16777216 - 1 - static_cast<int64_t>(kMaxAgedRanks));
}
