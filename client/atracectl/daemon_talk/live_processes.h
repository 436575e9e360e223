// `atracectl list --live`: the live processes the daemon holds rings for (LIST_LIVE), with
// their labels, when their rings last advanced and the hang watch's verdict, for an operator
// finding a hung job's ranks on a host before anything was saved (docs/FLEET.md, step 1).
// Everything shown is the process's own word (labels) or the kernel's (comm): escaped, and
// bounded by the daemon's ATR_MAX_LIVE_ENTRIES entries of bounded fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "atraced/atrace_client.hpp"
#include "atraced/base/status.h"

namespace atracectl {

struct LiveListing {
  std::vector<atrace::Client::LiveEntry> entries;  // by job, then rank, then pid
  uint32_t omitted = 0;                            // matched past the daemon's bound
};

// Asks the daemon behind `client` (opened with ATRACE_OPT_LIST_LIVE) for every process of
// `job` ("" every job) the caller may see. The error names what failed and what to do.
atraced::Status FetchLive(atrace::Client& client, const std::string& job, LiveListing* out);

// "running", "stalled busy", "stalled blocked", "dumped with its job", "no record yet" or
// "not watched".
std::string LiveState(const atrace::Client::LiveEntry& e);

// The table (a header, then a line per process) and the JSON document ({"processes":[...],
// "omitted":N}).
std::string LiveText(const LiveListing& listing);
std::string LiveJson(const LiveListing& listing);

}  // namespace atracectl
