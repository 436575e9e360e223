// The submit case: AtraceSubmit of a 112-byte record through libascend_trace (locked and
// noLock objects) against a plain copy into a process-local ring of the same shape stamped
// with the cycle counter (and, for reference, with the vDSO clock), with 1 thread and with 4
// threads sharing one locked object.
#pragma once

#include "bench_util.h"

namespace atraced_bench {

void SubmitCase(int rounds, int records, Table& table);

}  // namespace atraced_bench
