// Which clock a new ring stamps its records with: the cycle counter wherever this process can
// read it and the daemon grants it (the daemon measures whether the counter keeps time, so a
// VM whose kernel keeps time with kvm-clock still stamps at the counter's cost), else
// CLOCK_MONOTONIC (docs/TIMESTAMPS.md).
//
// ATRACE_RING_CLOCK=monotonic makes every ring of the process use CLOCK_MONOTONIC (an
// operator who distrusts the counter, and the tests of the fallback). Any other value is
// reported on stderr once and ignored; the variable is read once, at the first ring.
#pragma once

namespace ascend_trace {

// True when this process may stamp with the counter: the environment allows it and the
// instruction runs here. The daemon must also grant ATR_FEATURE_RING_COUNTER.
bool CounterStampsWanted();

}  // namespace ascend_trace
