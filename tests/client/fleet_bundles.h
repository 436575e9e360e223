// Synthetic bundles of `atracectl export --format tar` for the merge and hang tests: a
// bundle.jsonl and event directories with CANN_API ring text and a dump's stack report in
// the form the daemon writes (daemon/crash/stack_format.h, the [stack] section asys reads),
// packed with tar and gzip; and hand-made tar members for hostile ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace fleet_test {

struct RankProcess {
  int rank = 0;
  int pid = 0;
  std::string blocked_in;  // the main thread's function below main
  int world_size = 6;
  std::string job = "J1";
  std::string comm = "train";
  int dumps = 1;  // directories with the ring and a stack report (a later one repeats the ring)
  std::optional<uint32_t> uid = std::nullopt;  // bundle.jsonl's "uid" (none: a bundle from before it)
  // Each later dump's copy of the ring placed this many microseconds later (the counter
  // clock's anchor moved between the saves), as the daemon's saves can.
  int later_shift_us = 0;
  std::string extra_frames = "";  // more [stack] lines (threads of their own) after the main thread's
  bool stacks = true;             // false: its directories hold the ring only (no dump was taken)
  // Each save of the ring ends with where its records sit in the ring (proto/ring_positions.h),
  // as the daemon writes it; `torn` is a record the second save lacks (torn while it was copied).
  bool positions = false;
  int torn = -1;
  // The records' text says "of TAG" and their times are the same for every process with that
  // tag ("": "of rank R", at times of the rank's own).
  std::string text_tag = "";
  // A stack report the process wrote itself, in a directory it made ("made_by":"client"),
  // later than its dumps, its main thread blocked in this function ("": none).
  std::string own_stack_in = "";
};

struct BundleSpec {
  std::string host;
  std::vector<RankProcess> ranks;
  bool clock_synchronized = true;
  std::string extra_meta_lines;  // appended to bundle.jsonl
  bool reverse_dirs = false;     // the event directories in the tar in reverse order (later dumps first)
};

// Writes the bundle's files under `dir` and packs them into `dir`.tar.gz; returns its path.
std::string MakeBundle(const std::string& dir, const BundleSpec& spec);

// One ustar member (header and padded data); `claimed_size` (if not 0) is written as the
// size instead of data.size(), in base-256 when it needs it.
std::string TarMember(const std::string& name, const std::string& data, char type = '0', uint64_t claimed_size = 0);
// A tar stream's end and gzip -c of `tar` into `path`.
void WriteGzipTar(const std::string& path, std::string tar);

}  // namespace fleet_test
