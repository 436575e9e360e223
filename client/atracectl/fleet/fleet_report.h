// What `hang` says of a job, as data: the ranks, who claims each, their stacks and last
// records, and what is made of them (missing ranks, conflicts, classes, culprits). Bundles
// fill it today (cmd_hang.cc); another input (the journal's entries of a job) fills the same
// RankClaim list, and Classify and the printers stay as they are.
//
// A rank is a process's word (its RANK_ID): another user's process may claim any rank. So:
//   - a rank claimed by two or more processes is a conflict, named with each claimant's uid,
//     host and pid, never merged: the claimant whose uid is the job's (the uid that the
//     most ranks claimed by one process alone share) is used, and when that does not pick
//     exactly one, the rank is left out of the classes and named;
//   - the world size is the one the job's uid labelled (a conflict's losers, and other uids,
//     do not set it), and missing ranks are computed as ranges from the ranks seen;
//   - stacks are the daemon's word only: a stack report a process wrote itself (in a directory
//     a client made) is never a rank's stack, never in a class and never decides a culprit;
//     it is listed as unverified, with its claimant;
//   - what is held and printed is bounded: stacks and last records by a total (the text
//     budget), the call-path tree by a node count, rank lists printed as ranges.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleet/stack_tree.h"

namespace atracectl {

struct LastRecord {
  int64_t ts = INT64_MIN;
  std::string text;
};

// One process that says it is a rank (a bundle's trace_ directory).
struct RankClaim {
  int64_t rank = 0;
  std::optional<int64_t> world_size;
  std::optional<uint32_t> uid;  // nullopt: the input does not say (an older bundle)
  std::string host;
  int32_t pid = 0;
  // Of its latest stack report that the daemon wrote (a dump, a stack dump, a crash or death
  // report: a directory the daemon made), by frame name; empty: none.
  std::vector<ThreadFrames> stacks;
  std::map<std::string, LastRecord> last;   // by tracer object
  // Stack reports the process wrote itself (stackcore_tracer_* files in a directory a client
  // made, bundle_meta.h's "made_by"): a process may write any frames there, so they are never
  // its stacks, only shown as unverified: how many, and the latest one's main thread.
  size_t unverified = 0;
  std::vector<std::string> unverified_main;
  std::string job;                          // its job label; "" when the input does not say
};

// A rank's dump that the daemon removed before it reached the input: the daemon's word (its
// order log's 'a' record, which export writes into bundle.jsonl, or its ATRACE_EVENT=aged
// journal entry). The strings are the input's, unescaped: printers escape them.
struct AgedRank {
  int64_t rank = 0;
  std::string host;             // "" when the input does not say
  std::string reason;           // count, bytes, keep-free, age or vacuum (the daemon's AgingReasonName)
  int64_t at_us = 0;            // when, by that host's clock
  bool exported = false;        // a bundle held it before it went
  std::optional<uint32_t> uid;  // whose dump it was; nullopt when the input does not say
  std::string dir;              // its directory, relative to the trace directory
};

// The aged dumps a report takes, at most (one per rank is kept).
inline constexpr size_t kMaxAgedRanks = 4096;

// The claim's main thread: the one whose tid is the pid, else the first. `c` has stacks.
const ThreadFrames& MainThread(const RankClaim& c);

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
  std::map<int64_t, size_t> world_size_claims;    // value -> processes labelling it
  std::optional<uint32_t> job_uid;
  std::map<int64_t, const RankClaim*> ranks;      // the claim used for each rank
  std::vector<RankConflict> conflicts;
  std::vector<int64_t> seen;                      // sorted
  std::string missing;                            // ranges: expected, no claim and no aged dump
  int64_t missing_count = 0;
  // By rank: the ranks expected with no claim whose dump the daemon aged (the latest of each).
  std::vector<AgedRank> aged;
  std::vector<int64_t> no_stacks, culprits;
  // Per host, the ranks whose newest record (over every tracer) is the oldest there: each
  // host's own clock, so hosts are never compared with each other.
  std::map<std::string, std::vector<int64_t>> first_stopped;
  std::vector<StackClass> classes;                // smallest first
  std::vector<const RankClaim*> unverified;       // claims with unverified stack reports, in input order
  StackTree tree;
  size_t unranked = 0;                            // processes without a rank, left out
  explicit FleetReport(size_t max_tree_nodes) : tree(max_tree_nodes) {}
};

// Builds the report of `claims` (which must outlive it).
void Classify(const std::vector<RankClaim>& claims, size_t unranked, FleetReport* report);

// Moves from the missing ranks to r->aged those with an aged dump in `aged` (Classify first):
// a rank no process claims, within the world size (any rank when none is labelled), whose
// dump's uid is the job's where both are known. The latest of each rank is kept, at most
// kMaxAgedRanks ranks.
void MarkAged(const std::vector<AgedRank>& aged, FleetReport* r);

// "uid 1000, n1, pid 42" ("uid ?" when the input does not say).
std::string ClaimantText(const RankClaim& c);

}  // namespace atracectl
