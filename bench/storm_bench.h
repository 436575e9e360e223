// The report storm (issue 22): N processes each save M full default rings at once, through
// atraced (one AtraceEventReportSync each) against the same processes saving in-process
// CANN's way, side by side round by round; and another client's STATUS round trip while
// the storm runs. Each process is bench/storm_child.cc, exec'd fresh.
#pragma once

#include <string>
#include <vector>

#include "bench_util.h"

namespace atraced_bench {

struct StormParams {
  std::string daemon_binary;
  std::string child_binary;
  std::string work;             // scratch, below it everything goes
  int rounds = 5;
  std::vector<int> processes{16, 64};
  int objects = 4;               // M: full rings per process
  std::vector<int> workers{1, 2};  // the daemons' --io-workers, one daemon each
  // Another daemon (--before) run as one more side, with the first of `workers`, in the same
  // rounds: the storm of two builds compared side by side. Empty: not run.
  std::string before_binary;
};

void StormCase(const StormParams& p, Table& table);

}  // namespace atraced_bench
