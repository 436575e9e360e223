/* How libatrace_hccl hands its collective ledger (atraced/proto/ledger_layout.h) to
 * libascend_trace, whose connection to atraced holds the process's rings: registered there,
 * the ledger is saved with every save of them (a dump, a crash, a death, a report, the exit).
 * Exported by libascend_trace (its version script exports Atrace*); not part of CANN's API. */
#ifndef ASCEND_TRACE_LEDGER_ATTACH_H_
#define ASCEND_TRACE_LEDGER_ATTACH_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the sealed memfd `memfd` (duplicated; the caller keeps its own) of `bytes` bytes
 * holding a ledger of `records` records, replacing one attached before by this process. The
 * library registers it again after every reconnect. Returns 0, or a negative errno: -EINVAL
 * for bad arguments, -ENOTSUP when the daemon reached does not hold ledgers, another when no
 * daemon is reachable now (it is registered when one is). */
int AtraceLedgerAttach(int memfd, uint32_t records, uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* ASCEND_TRACE_LEDGER_ATTACH_H_ */
