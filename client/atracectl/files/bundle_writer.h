// atracectl export --format tar: a bug-report bundle (.tar.gz) of the selected event
// directories, with what whoever reads it needs to know of the host and the daemon:
//   bundle.jsonl     first: the host (name, boot id, its clocks and whether NTP keeps them
//                    synchronized) and each directory with its process's job, rank and world
//                    size, and each dump of their jobs the daemon aged before (bundle_meta.h),
//                    for merge and hang
//   status.json      atracectl status --json at export time (limits, counts, counters)
//   version.txt      atracectl's version and protocol, and the daemon's socket
//   atraced.conf     the daemon's configuration file, where this user may read it
//   uname.txt        uname(2): system, release, version, machine
//   os-release       /etc/os-release
//   atrace/...       the event directories, as they are under <root>/atrace
// Made by tar(1) --sparse (GNU tar, in every Debian) piped through gzip(1), from a scratch
// directory for the host files, into the output file made before any of this (output_file.h).
// The tar stream is bounded (--max-size): past the bound the bundle stops and fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "atraced/atrace_client.hpp"
#include "common/command_line.h"
#include "common/output_file.h"

namespace atracectl {

// --max-size's default: the tar stream (before gzip) may hold 1 GiB.
inline constexpr uint64_t kDefaultBundleMaxSize = 1ull << 30;

// Writes the bundle to `out`, at most `max_size` bytes of tar stream; keeps `out` on success.
// Returns an exit code, after saying why on stderr.
// `aged`: the dumps of the entries' jobs the daemon aged before (bundle.jsonl's "aged" lines).
int WriteBundle(const Globals& g, const std::string& trace_dir, const std::vector<atrace::ListEntry>& entries,
                const std::vector<atrace::Client::AgedEntry>& aged, uint64_t max_size, NewOutputFile& out);

}  // namespace atracectl
