#include "ring_clock.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "atraced/base/cycle_counter.h"

namespace ascend_trace {

namespace {

bool Decide() {
  if (const char* v = std::getenv("ATRACE_RING_CLOCK"); v != nullptr && *v != '\0') {
    if (std::strcmp(v, "monotonic") == 0) return false;
    if (std::strcmp(v, "auto") != 0) {
      std::fprintf(stderr, "libascend_trace: ATRACE_RING_CLOCK=%s is neither monotonic nor auto; using auto\n", v);
    }
  }
  return atraced::CounterInstructionRuns(nullptr);
}

}  // namespace

bool CounterStampsWanted() {
  static const bool wanted = Decide();  // thread-safe, once
  return wanted;
}

}  // namespace ascend_trace
