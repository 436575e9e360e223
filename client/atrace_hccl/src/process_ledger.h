// The process's ledger, its communicators and its completion tracker: made at the first HCCL
// call (a process that inherits LD_PRELOAD and never calls HCCL gets no ledger and never
// connects), handed to libascend_trace for the daemon (ledger_attach.h), and made again in
// a forked child, which must not write into its parent's.
#pragma once

#include "comm_table.h"
#include "completion.h"
#include "hccl_types.h"
#include "ledger_writer.h"

namespace atrace_hccl {

// The ledger, or nullptr when none could be made (the calls go on unrecorded).
LedgerWriter* Ledger();
CommTable& Comms();
CompletionTracker& Completion();
// Looks for the acl runtime again (at a communicator's creation: by then a device is set);
// once found, the ledger's header says completion is tracked.
void ProbeCompletion();

// How the interposer asks HCCL about a communicator: the real functions, found as the
// collectives are (interpose.cc).
const CommQueries& RealQueries();

}  // namespace atrace_hccl
