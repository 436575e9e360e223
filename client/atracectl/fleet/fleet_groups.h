// The processes of several bundles (bundle_reader.h) as merge and hang see them: one group
// per process (a bundle and a trace_ directory), with the rank, job and world size its
// directories carry and the host of its bundle, in rank order: ranks numerically, then the
// processes without a rank (by host and pid).
#pragma once

#include <cstdint>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "files/bundle_reader.h"

namespace atracectl {

struct FleetGroup {
  size_t bundle = 0;
  std::string process_dir;  // trace_{pgid}_{pid}_{time}
  int32_t pid = 0;
  std::string comm, host, job;
  std::optional<int64_t> rank, world_size;
  std::optional<uint32_t> uid;  // the daemon's word (bundle.jsonl), nullopt in an older bundle
  int64_t id = 0;  // 1.. in rank order: the merged timeline's process track
};

struct FleetBundle {
  std::string path;
  BundleHost host;
  bool has_host = false;
  std::string error;  // reading its metadata failed
};

class FleetGroups {
 public:
  // Reads each bundle's bundle.jsonl (its first member only) and orders the processes.
  explicit FleetGroups(const std::vector<std::string>& bundle_paths);

  const std::vector<FleetBundle>& bundles() const { return bundles_; }
  const std::vector<FleetGroup>& groups() const { return groups_; }  // by id - 1
  // The group of `dir` in bundle `b`: known from bundle.jsonl, or added (after the others).
  FleetGroup& Of(size_t b, const BundleDir& dir);
  // "rank R · HOST · pid P · COMM" ("no rank · ..." without one).
  static std::string Label(const FleetGroup& g);
  // The host a bundle names, else its file name.
  std::string HostOf(size_t b) const;

 private:
  std::vector<FleetBundle> bundles_;
  std::vector<FleetGroup> groups_;
  std::map<std::pair<size_t, std::string>, size_t> index_;  // (bundle, process dir) -> groups_
};

// "0-3,5,7": a set of ranks as ranges; past about `max_chars`, the rest as a count
// ("...,9 (120 more ranks)").
std::string RankRanges(const std::vector<int64_t>& sorted_ranks, size_t max_chars = SIZE_MAX);
// The ranks of [0, world) not in `sorted_seen`, as ranges, and how many: computed from the
// ranks seen, never rank by rank (a world size is a process's word: 16777216 costs nothing).
std::string MissingRanges(const std::vector<int64_t>& sorted_seen, int64_t world, size_t max_chars, int64_t* count);

}  // namespace atracectl
