#include "atraced/rings/counter_trust.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "atraced/base/cycle_counter.h"

namespace atraced::core {

namespace {

// A bracket wider than this says more about the scheduler than about the counter.
constexpr int64_t kWidestUsefulBracketNs = 50'000;

int64_t MonotonicNs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

CounterVerdict JudgeCounter(const CounterEvidence& e) {
  if (!e.instruction_runs) return {false, std::string("the counter cannot be read: ") + e.instruction_problem};
  if (!e.cpu_says_invariant) return {false, "the CPU does not say its counter is invariant (CPUID 0x80000007 EDX bit 8)"};
  if (!e.rate_problem.empty()) return {false, e.rate_problem};
  std::vector<const CpuCounterReading*> usable;
  for (const CpuCounterReading& r : e.cpus) {
    if (r.monotonic_after_ns >= r.monotonic_before_ns && r.monotonic_after_ns - r.monotonic_before_ns <= kWidestUsefulBracketNs) {
      usable.push_back(&r);
    }
  }
  if (usable.size() < 2 || e.ticks_per_ns <= 0) return {true, ""};
  // Each CPU's counter as an offset from CLOCK_MONOTONIC (in ns), with the uncertainty of
  // its bracket: two CPUs disagree only by what their brackets cannot explain.
  const CpuCounterReading* lo = nullptr;
  const CpuCounterReading* hi = nullptr;
  double lo_off = 0, hi_off = 0;
  const auto offset = [&](const CpuCounterReading& r) {
    const double mid = static_cast<double>(r.monotonic_before_ns) +
                       static_cast<double>(r.monotonic_after_ns - r.monotonic_before_ns) / 2;
    return static_cast<double>(r.counter - usable.front()->counter) / e.ticks_per_ns - (mid - static_cast<double>(usable.front()->monotonic_before_ns));
  };
  for (const CpuCounterReading* r : usable) {
    const double off = offset(*r);
    if (lo == nullptr || off < lo_off) lo = r, lo_off = off;
    if (hi == nullptr || off > hi_off) hi = r, hi_off = off;
  }
  const double slack = static_cast<double>((lo->monotonic_after_ns - lo->monotonic_before_ns) +
                                           (hi->monotonic_after_ns - hi->monotonic_before_ns)) / 2;
  const double skew = hi_off - lo_off - slack;
  if (skew <= static_cast<double>(kMaxCpuSkewNs)) return {true, ""};
  char why[160];
  std::snprintf(why, sizeof why, "the counters of CPU %d and CPU %d disagree by %.3f ms (at most %.3f ms is trusted)",
                lo->cpu, hi->cpu, skew / 1e6, static_cast<double>(kMaxCpuSkewNs) / 1e6);
  return {false, why};
}

std::vector<CpuCounterReading> ReadCounterOnEachCpu() {
  std::vector<CpuCounterReading> out;
  cpu_set_t original;
  if (::sched_getaffinity(0, sizeof original, &original) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &original)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) continue;
    CpuCounterReading best{cpu, 0, 0, INT64_MAX};
    for (int attempt = 0; attempt < 16; ++attempt) {
      const int64_t before = MonotonicNs();
      const uint64_t counter = ReadCycleCounter();
      const int64_t after = MonotonicNs();
      if (after - before < best.monotonic_after_ns - best.monotonic_before_ns) best = {cpu, before, counter, after};
      if (after - before < 2'000) break;
    }
    out.push_back(best);
  }
  ::sched_setaffinity(0, sizeof original, &original);
  return out;
}

}  // namespace atraced::core
