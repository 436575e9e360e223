// Which clock a new ring stamps its records with: the cycle counter where it can be trusted
// (atraced/base/cycle_counter.h), else CLOCK_MONOTONIC (docs/TIMESTAMPS.md).
//
// ATRACE_RING_CLOCK=monotonic makes every ring of the process use CLOCK_MONOTONIC (an
// operator who distrusts the counter, and the tests of the fallback). Any other value is
// reported on stderr once and ignored; the variable is read once, at the first ring.
#pragma once

namespace ascend_trace {

// True when this process may stamp with the counter: the environment allows it and the
// counter is usable here. The daemon must also grant ATR_FEATURE_RING_COUNTER.
bool CounterStampsWanted();

}  // namespace ascend_trace
