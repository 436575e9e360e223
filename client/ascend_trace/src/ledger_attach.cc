// AtraceLedgerAttach (ledger_attach.h): the ledger joins the process's rings on the link.
#include "ledger_attach.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "atrace_types.h"
#include "atraced/proto/ledger_layout.h"
#include "daemon_link.h"
#include "state.h"

using namespace ascend_trace;

extern "C" TRACE_EXPORT int AtraceLedgerAttach(int memfd, uint32_t records, uint64_t bytes) {
  if (memfd < 0 || records == 0 || (records & (records - 1)) != 0 || records > ATR_LEDGER_MAX_RECORDS ||
      bytes < ATR_LEDGER_BYTES(records) || bytes > ATR_RING_MAX_BYTES) {
    return -EINVAL;
  }
  atraced::UniqueFd own(::fcntl(memfd, F_DUPFD_CLOEXEC, 0));
  if (!own.valid()) return -errno;
  State& s = GetState();
  std::lock_guard lock(s.mu);
  s.ledger.memfd = std::move(own);
  s.ledger.records = records;
  s.ledger.bytes = bytes;
  s.ledger.wire_id = s.next_wire_id++;
  s.ledger.pid = ::getpid();
  s.ledger.registered_epoch = 0;
  return s.link->RegisterLedger(s);
}
