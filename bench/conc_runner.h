// N client processes doing events at once for a fixed time: forks them, lets each set up
// (connect, prefill) before a common start, then stops them all and sums what they did. The
// concurrency case (atraced against CANN-style processes) and the floor case (null daemon
// against the same) run their processes through this, so they are started, timed and
// sampled alike.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace atraced_bench {

// One process's work: one event per call, returning the latency sample to record for it
// (ns; each side times the part it reports). Fails by throwing (Fail).
using ConcStep = std::function<uint32_t()>;
// Runs in the child before the start signal; returns the step. Throws on failure.
using ConcSetup = std::function<ConcStep()>;

struct ConcResult {
  double events_per_s = 0;
  uint64_t events = 0;            // of all processes
  double p50_us = 0, p99_us = 0;  // of the samples of all processes
  std::string error;              // empty, or the first failure of a process
};

// One client count's runs over the rounds: a value per run of each figure.
struct ConcSeries {
  std::vector<double> eps, p50, p99;
  // Records a run; returns its throughput (the side's value for Interleave).
  double Add(const ConcResult& r) {
    eps.push_back(r.events_per_s);
    p50.push_back(r.p50_us);
    p99.push_back(r.p99_us);
    return r.events_per_s;
  }
  // Interleave's warm-up run also recorded: drop it.
  void DropWarmup() {
    for (auto* x : {&eps, &p50, &p99}) {
      if (!x->empty()) x->erase(x->begin());
    }
  }
};

// Forks `clients` processes (PR_SET_PDEATHSIG SIGKILL), runs setup in each, starts them
// together through a pipe, stops them after `ms`. Throughput is events of all over the time
// from the start to the last event.
ConcResult RunProcesses(int clients, int ms, const ConcSetup& setup);

// The CANN-style process: its own CannWriter at record num 10 under `root`, filled to its
// limit; each step is one 4 KiB event, the sample being time + mkdir of the event dir.
ConcStep CannProcessStep(const std::string& root);

}  // namespace atraced_bench
