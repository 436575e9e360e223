// bundle.jsonl: what `atracectl export --format tar` records of the host and of each
// directory, for `merge` and `hang` on another machine. JSON Lines (one flat object per line,
// `jq` reads it), written first in the bundle:
//
//   {"record":"host","format":1,"host":"n1","boot_id":"...","exported_unix_us":...,
//    "utc_offset_s":3600,"realtime_us":...,"monotonic_us":...,"boottime_us":...,
//    "clock_synchronized":true,"adjtimex":"TIME_OK","maxerror_us":...,"esterror_us":...}
//   {"record":"dir","path":"trace_.../schedule_event_...","pid":12,"comm":"python3",
//    "kind":"schedule","side":"host","device_id":0,"created_unix_us":...,
//    "job":"J1","rank":3,"world_size":8,"uid":1000,"seq":42,"made_by":"daemon"}
//                                       (labels: null where the process sent none)
//   {"record":"aged","dir":"trace_.../schedule_event_...","job":"J1","rank":3,"world_size":8,
//    "uid":1000,"reason":"bytes","at":...,"exported":false,"by":"hang"}
//
// "aged" is a dump of the exported job(s) that the daemon's aging removed before the export
// (AGED_DUMPS: the daemon's word, kept in its order log), one line each: "reason" is why
// (count, bytes, keep-free, age, vacuum), "at" when (the daemon's clock, microseconds since
// the epoch), "by" whose dump it was (dump: an operator's, hang: the hang watch's). `hang`
// names its rank aged, not missing.
//
// "made_by" is LIST's ATRACE_LIST_CLIENT: "client" for a directory a client made (its files,
// a stack report among them, are the process's word), "daemon" for one the daemon made for
// a save (rings, a crash, death or stack-dump report, a dump), every file its own. A bundle
// from before the key, or of a daemon from before the flag, reads "daemon" throughout.
//
// The clock: CLOCK_REALTIME, CLOCK_MONOTONIC and CLOCK_BOOTTIME read together at export, and
// adjtimex(2)'s view: "clock_synchronized" is false when adjtimex reports TIME_ERROR or the
// kernel's STA_UNSYNC (no NTP/PTP daemon has disciplined the clock), so that a merge of
// several hosts can say which timelines may be shifted against the others.
//
// The reader takes a bundle from anywhere: every field is checked (labels by the daemon's own
// rule, proto::CheckLabel), unknown keys are ignored, a line that is not one is skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/atrace_client.hpp"

namespace atracectl {

inline constexpr const char* kBundleMetaName = "bundle.jsonl";

struct BundleHost {
  std::string host, boot_id;
  int64_t exported_unix_us = 0;
  int32_t utc_offset_s = 0;
  int64_t realtime_us = 0, monotonic_us = 0, boottime_us = 0;
  std::optional<bool> clock_synchronized;  // nullopt: the bundle does not say
  std::string adjtimex;                     // "TIME_OK", ..., "TIME_ERROR"
};

struct BundleDir {
  std::string path;  // relative to atrace/: trace_.../<event dir>
  int32_t pid = 0;
  std::string comm, kind, side;  // kind: schedule|stackcore|exit; side: host|device
  uint32_t device_id = 0;
  int64_t created_unix_us = 0;
  std::string job;                         // "" none
  std::optional<int64_t> rank, world_size;  // nullopt none
  // The uid the daemon made it for (its process's, from LIST; nullopt in an older bundle):
  // who claims a rank, when two processes do (hang).
  std::optional<uint32_t> uid;
  uint64_t seq = 0;  // the daemon's sequence number of the directory (0: an older bundle)
  // A client made it ("made_by":"client"): its stack reports are the process's word, not the
  // daemon's (hang shows them as unverified). A directory bundle.jsonl does not describe is too.
  bool client = false;
};

// A dump the daemon aged before the export ("aged" line).
struct BundleAged {
  std::string dir;     // relative to atrace/; not in the bundle
  std::string job;     // a job label
  int64_t rank = 0;
  std::optional<int64_t> world_size;
  std::optional<uint32_t> uid;
  std::string reason;  // count, bytes, keep-free, age or vacuum
  int64_t at_us = 0;
  bool exported = false;
  bool hang = false;   // the hang watch's dump ("by":"hang")
};

// The host line of this machine, now.
BundleHost ThisHost();
// The lines of bundle.jsonl.
std::string BundleHostLine(const BundleHost& host);
std::string BundleDirLine(const atrace::ListEntry& entry);
// The "aged" line of an AGED_DUMPS entry; "" for one with no job or rank (no rank to name).
std::string BundleAgedLine(const atrace::Client::AgedEntry& entry);

// One line of bundle.jsonl: which record it is ("host", "dir", "aged", or "" when it is not one).
struct BundleMetaLine {
  std::string record;
  BundleHost host;
  BundleDir dir;
  BundleAged aged;
};
BundleMetaLine ParseBundleMetaLine(std::string_view line);

}  // namespace atracectl
