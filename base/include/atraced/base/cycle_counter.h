// The machine's free-running cycle counter, read from user space: rdtsc on x86-64,
// cntvct_el0 on aarch64.
//
// libascend_trace stamps ring records with it (8 ns here against 18 ns for the vDSO clock,
// docs/TIMESTAMPS.md) and the daemon reads the same counter when it saves, to turn stamps
// into wall time. Both sides must read the same counter, so the read lives here, once.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace atraced {

// True where this build knows a counter instruction at all.
#if defined(__x86_64__) || defined(__aarch64__)
inline constexpr bool kHaveCycleCounter = true;
#else
inline constexpr bool kHaveCycleCounter = false;
#endif

inline uint64_t ReadCycleCounter() {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return 0;
#endif
}

// Whether this process can read the counter at all: x86-64 unless rdtsc was made to fault
// for it (prctl PR_SET_TSC, as some sandboxes do); aarch64's cntvct_el0, which Linux always
// lets EL0 read. The library stamps records with the counter wherever this holds and the
// daemon grants it. Whether the counter keeps time well enough is not this process's
// question: the daemon measures that (daemon/rings/counter_trust.h, docs/TIMESTAMPS.md).
// `why`, when not null, receives the reason on false.
bool CounterInstructionRuns(const char** why);

// Whether the CPU says its counter ticks at one rate in every power state (x86-64: the
// invariant TSC, CPUID 0x80000007 EDX bit 8; aarch64: the generic timer, always).
bool CpuSaysCounterInvariant();

// CLOCK_REALTIME, CLOCK_MONOTONIC and the counter, read together: the ring's anchors (the
// library) and the save's "now" (the daemon) are both taken with this.
struct ClockSample {
  int64_t realtime_ns = 0;
  int64_t monotonic_ns = 0;
  uint64_t counter = 0;  // 0 when `with_counter` was false
};
// Reads realtime, monotonic, the counter, monotonic, realtime, and keeps the means: each
// clock sits between two reads of the next. A preemption inside that bracket would misplace
// every record stamped against the sample, so a bracket wider than a few microseconds (or
// one a realtime step crossed) is read again, a few times at most, and the tightest kept.
ClockSample SampleClocks(bool with_counter);

}  // namespace atraced
