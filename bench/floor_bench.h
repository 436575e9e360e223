// The floor case: what the best possible daemon could do on this machine. The same
// workloads as the churn (synchronous events), concurrency and bulk cases, sent to the null
// daemon (null_daemon.h) instead of atraced, side by side with the same baselines. A target
// of those cases may be missed only with a floor measured here showing it out of reach; the
// rows have no targets themselves: they measure the machine, not atraced.
//
// Three null daemons run in the same rounds: the single-threaded one (rows floor.*), and the
// multi-threaded one (null_daemon.h, Options::threads) with one worker (floor.mt1.*, the
// like-for-like check: the same loop behind an accepting thread) and with one worker per CPU
// the bench may use (floor.mt.*, sched_getaffinity). The bulk rows use the single-threaded
// one only (one connection: a second worker has nothing to do).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"

namespace atraced_bench {

// The counts of the cases mirrored, so each floor row runs the same amount of work.
struct FloorParams {
  std::string work;  // scratch directory; this case uses <work>/floor and <work>/floor.sock
  int sync_rounds = 0;
  int sync_events = 0;  // events per side per round (churn_events)
  int rtt_iters = 0;    // ping-pongs per round
  int bulk_rounds = 0;
  size_t bulk_bytes = 0;
  int conc_rounds = 0;
  int conc_ms = 0;
  std::vector<int> conc_clients;
  // Optional: one synchronous atrace_emit against a real atraced at record num 10, and a wait
  // (untimed) for its background deletes. When set, the synchronous rows run it as one more
  // side in the same rounds, so atraced is set against the null daemon directly.
  std::function<void()> atraced_emit;
  std::function<void()> atraced_settle;
};

void FloorCase(const FloorParams& p, Table& table);

}  // namespace atraced_bench
