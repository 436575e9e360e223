// The cpu case: what the daemon itself spends per event, and its memory, for two daemon
// binaries side by side (issue 22's "daemon CPU per event and RSS, before and after"). Both
// run at once, each on its own root (record num 10, so every event ages one directory), and
// the same workloads go to each in turn, interleaved by rounds:
//   sync - one client, atrace_emit of one 4 KiB file, events one at a time;
//   cN   - N client processes looping atrace_emit (the concurrency case's emit side).
// Per side: the daemon's CPU time (user + system of all its threads, from its process CPU
// clock, clock_getcpuclockid: the utime+stime of /proc/PID/stat at nanosecond resolution),
// from before the workload until its background deletes are done, divided by the events;
// the events/s the clients got; the daemon's peak RSS during the side (VmHWM, reset through
// /proc/PID/clear_refs before it) and its VmRSS after. Ratios after/before are per round.
#pragma once

#include <string>
#include <vector>

#include "bench_util.h"

namespace atraced_bench {

struct CpuParams {
  std::string work;           // scratch; this case uses <work>/cpu-{before,after}
  std::string after_binary;   // the daemon under test (--atraced)
  std::string before_binary;  // the one to compare with (--before; the same binary if not given)
  int rounds = 0;
  int sync_events = 0;        // per sync side per round
  int conc_ms = 0;            // per concurrent side per round
  std::vector<int> clients;   // client process counts of the concurrent sides
};

void CpuCase(const CpuParams& p, Table& table);

}  // namespace atraced_bench
