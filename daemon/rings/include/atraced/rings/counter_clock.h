// The daemon's view of the cycle counter: its snapshot history (clock_history.h) and whether
// libraries may stamp with it (counter_trust.h). One per daemon, given to the rings it
// holds and to the HELLO handler at construction.
//
// Built with a first measurement: two snapshots kCalibrationNs apart for a first rate, and
// the CPUs' readings. Then Tick (the event loop, every tick) adds a snapshot and, every
// kProbeEveryTicks ticks, reads each CPU again; every ring save adds its own sample
// (SampleForSave). The first failed check ends the grant for the daemon's life and is
// logged once, with why, from the loop: a counter that broke once may break again.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "atraced/base/cycle_counter.h"
#include "atraced/common/log.h"
#include "atraced/rings/clock_history.h"
#include "atraced/rings/counter_trust.h"

namespace atraced::core {

class CounterClock {
 public:
  static constexpr int64_t kCalibrationNs = 20'000'000;
  static constexpr int kProbeEveryTicks = 150;  // 5 minutes of 2 s ticks

  // `log` may be null (tests). `evidence_for_tests`, when set, replaces the measurement of
  // the CPU and its instruction (what JudgeCounter would get) for every check.
  explicit CounterClock(Logger* log, const CounterEvidence* evidence_for_tests = nullptr);

  // On the event loop: a snapshot, now and then the CPUs' readings, and the log line of a
  // failed check (once).
  void Tick();
  // The save's "now": the clocks read together, added to the history.
  ClockSample SampleForSave();
  // The snapshots that bear on a ring anchored at `monotonic_ns` (ClockHistory::Since).
  std::vector<ClockSnapshot> Since(int64_t monotonic_ns) const { return history_.Since(monotonic_ns); }

  // Whether a library connecting now may stamp its rings with the counter.
  bool Granted() const { return granted_.load(std::memory_order_relaxed); }
  // Why not, once it is not ("" while granted).
  std::string why_not() const;

 private:
  void Check(const std::string& rate_problem, bool probe_cpus);
  void LogOnce();

  Logger* log_;
  const CounterEvidence* fixed_evidence_;
  ClockHistory history_;
  std::atomic<bool> granted_{false};
  mutable std::mutex why_mu_;
  std::string why_not_;
  bool readable_ = false;  // this process may read the counter at all
  // The CPU's invariant-counter bit, asked once: it is fixed for the life of the process (a
  // guest's CPUID is its VM's configuration), and one CPUID is most of a tick's cost in a
  // guest, where it traps to the hypervisor (bench/tick_bench.cc).
  bool cpu_says_invariant_ = false;
  bool logged_ = false;    // the loop's
  int ticks_ = 0;
};

}  // namespace atraced::core
