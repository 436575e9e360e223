// Whether the daemon lets libraries stamp records with the cycle counter: decided by
// measuring the counter, not by the kernel's choice of clocksource.
//
// A kernel that keeps time with kvm-clock (every VM here boots with the TSC marked unstable)
// may be right to distrust the TSC for its own timekeeping, which must never step back. A
// trace stamp needs less, and the daemon checks what it needs itself:
//   - the CPU says the counter is invariant (one rate in every power state);
//   - this process can read it (rdtsc not disabled by PR_SET_TSC);
//   - read pinned to each online CPU, bracketed by CLOCK_MONOTONIC, the CPUs' counters
//     agree within kMaxCpuSkewNs (at start-up, then every few minutes);
//   - between snapshots, the counter keeps its rate against CLOCK_MONOTONIC (the clock
//     history's verdicts, clock_history.h).
// A counter that fails any of them is not granted to libraries that connect afterwards
// (they stamp with CLOCK_MONOTONIC); rings already stamped are placed through the history,
// which marks the interval of the failure. docs/TIMESTAMPS.md says the same for operators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace atraced::core {

// The CPUs' counters may disagree by this much (after the brackets' own uncertainty) and
// still be trusted: well below the 2 ms a record must be placed within.
inline constexpr int64_t kMaxCpuSkewNs = 100'000;

// One CPU's reading: CLOCK_MONOTONIC just before and just after the counter was read there.
struct CpuCounterReading {
  int cpu = 0;
  int64_t monotonic_before_ns = 0;
  uint64_t counter = 0;
  int64_t monotonic_after_ns = 0;
};

struct CounterEvidence {
  bool cpu_says_invariant = false;
  bool instruction_runs = false;
  const char* instruction_problem = "";  // why not, when !instruction_runs
  double ticks_per_ns = 0;                 // the rate to compare the CPUs by; 0 unknown
  std::vector<CpuCounterReading> cpus;     // empty: not measured this time
  std::string rate_problem;                // the clock history's last verdict, "" if kept
};

struct CounterVerdict {
  bool trusted = false;
  std::string why;  // the reason it is not trusted; "" when trusted
};

// Pure: the decision from what was measured. With fewer than two readings the CPUs'
// agreement is not judged (one CPU, or brackets too wide on a busy machine: not evidence).
CounterVerdict JudgeCounter(const CounterEvidence& e);

// Reads the counter pinned to each online CPU in turn, bracketed by CLOCK_MONOTONIC,
// keeping the tightest of a few tries per CPU; the calling thread's CPU mask is restored.
// CPUs this thread may not run on are skipped.
std::vector<CpuCounterReading> ReadCounterOnEachCpu();

}  // namespace atraced::core
