// What `hang` says of a job, as data: the ranks, who claims each, their stacks and last
// records, and what is made of them (missing ranks, conflicts, classes, culprits). Two inputs
// fill the same RankClaim list: bundles (cmd_hang.cc) and the journal's hang entries of a job
// (journal/journal_claims.h); Classify and the shared printers are the same for both.
//
// A rank is a process's word (its RANK_ID): another user's process may claim any rank. So:
//   - a rank claimed by two or more processes is a conflict, named with each claimant's uid,
//     host and pid, never merged: the claimant whose uid is the job's (the uid that the
//     most ranks claimed by one process alone share) is used, and when that does not pick
//     exactly one, the rank is left out of the classes and named;
//   - the world size is the one the job's uid labelled, and missing ranks are computed as
//     ranges from the ranks seen (a world size of 2^24 prints as one range, not 2^24 numbers).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stack_tree.h"

namespace atracectl {

struct LastRecord {
  int64_t ts = INT64_MIN;  // INT64_MIN: the input gives no time
  std::string text;
};

// One process that says it is a rank.
struct RankClaim {
  int64_t rank = 0;
  std::optional<int64_t> world_size;
  std::optional<uint32_t> uid;  // nullopt: the input does not say
  std::string host;
  int32_t pid = 0;
  std::vector<ThreadStack> stacks;         // of its latest report; empty: none
  std::map<std::string, LastRecord> last;  // by tracer object
};

struct RankConflict {
  int64_t rank = 0;
  std::vector<const RankClaim*> claimants;  // in input order
  const RankClaim* used = nullptr;          // nullptr: none could be chosen
};

struct StackClass {
  std::vector<std::string> stack;  // the main thread's frames, innermost first
  std::vector<int64_t> ranks;
};

struct FleetReport {
  std::optional<int64_t> world_size;
  std::map<int64_t, size_t> world_size_claims;  // value -> processes labelling it
  std::optional<uint32_t> job_uid;
  std::map<int64_t, const RankClaim*> ranks;  // the claim used for each rank
  std::vector<RankConflict> conflicts;
  std::vector<int64_t> seen;  // sorted
  std::string missing;        // ranges
  int64_t missing_count = 0;
  std::vector<int64_t> no_stacks, culprits, oldest;
  std::vector<StackClass> classes;  // smallest first
  StackTree tree;
  size_t unranked = 0;  // processes without a rank, left out
};

// Builds the report of `claims` (which must outlive it).
void Classify(const std::vector<RankClaim>& claims, size_t unranked, FleetReport* report);

// "uid 1000, n1, pid 42" ("uid ?" when the input does not say).
std::string ClaimantText(const RankClaim& c);

// The ranks of [0, world) not in `sorted_seen`, as ranges cut near `max_chars` (",..."), and
// their number in `count`.
std::string MissingRanges(const std::vector<int64_t>& sorted_seen, int64_t world, size_t max_chars, int64_t* count);

// The report's shared text: "Ranks seen", world sizes, conflicts (where_missing: what
// "missing" means for this input), then the classes and the culprits.
std::string SeenText(const FleetReport& r, const std::string& where_missing);
std::string ClassesText(const FleetReport& r);
// The report's shared JSON keys (without braces): ranks_expected, world_size,
// world_size_claims, job_uid, ranks_seen, missing, missing_count, conflicts, classes, outliers,
// no_stacks.
std::string SharedJson(const FleetReport& r);
std::string JsonInts(const std::vector<int64_t>& v);

}  // namespace atracectl
