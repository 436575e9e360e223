#include "atraced/base/cycle_counter.h"

#include <sys/prctl.h>
#include <time.h>

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace atraced {

namespace {

int64_t ReadNs(clockid_t id) {
  timespec ts;
  ::clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

ClockSample SampleClocks(bool with_counter) {
  constexpr int64_t kTightNs = 4000;
  ClockSample best;
  int64_t best_width = INT64_MAX;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int64_t real1 = ReadNs(CLOCK_REALTIME);
    const int64_t mono1 = ReadNs(CLOCK_MONOTONIC);
    const uint64_t counter = with_counter ? ReadCycleCounter() : 0;
    const int64_t mono2 = ReadNs(CLOCK_MONOTONIC);
    const int64_t real2 = ReadNs(CLOCK_REALTIME);
    // A realtime step backwards inside the bracket makes it negative: as bad as the widest.
    const int64_t width = real2 >= real1 ? real2 - real1 : INT64_MAX - 1;
    if (width < best_width || attempt == 0) {
      best = {real1 + (real2 - real1) / 2, mono1 + (mono2 - mono1) / 2, counter};
      best_width = width;
    }
    if (width <= kTightNs) break;
  }
  return best;
}

bool CounterInstructionRuns(const char** why) {
  const char* unused;
  if (why == nullptr) why = &unused;
#if defined(__x86_64__)
  int tsc_mode = 0;
  if (::prctl(PR_GET_TSC, &tsc_mode, 0, 0, 0) == 0 && tsc_mode != PR_TSC_ENABLE) {
    *why = "rdtsc is disabled for this process (PR_SET_TSC)";
    return false;
  }
  return true;
#elif defined(__aarch64__)
  return true;
#else
  *why = "no cycle counter is known on this architecture";
  return false;
#endif
}

bool CpuSaysCounterInvariant() {
#if defined(__x86_64__)
  unsigned eax, ebx, ecx, edx;
  return static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) >= 0x80000007u &&
         __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) && (edx & (1u << 8)) != 0;
#elif defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

}  // namespace atraced
