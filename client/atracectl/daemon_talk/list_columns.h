// Columns of `atracectl list` read beside the daemon's LIST: HOW (how each directory came to
// be, dir_origin.h, read from its report) and TIME (when it was made, in local time).
#pragma once

#include <cstdint>
#include <string>

#include "atraced/atrace_client.hpp"

namespace atracectl {

// "crash SIGSEGV", "killed SIGKILL", "oom", "exited 1", "died", "dump", "hang", "report", "exit" or
// "stackcore", for the directory of `entry` under `trace_dir` (<root>/atrace); escaped for a
// terminal (the signal is the report's word).
std::string HowColumn(const atrace::ListEntry& entry, const std::string& trace_dir);

// "YYYY-MM-DD hh:mm:ss" of a time in microseconds since the epoch, in local time (also info's).
std::string LocalTimeColumn(uint64_t unix_us);

}  // namespace atracectl
