// Admission: whether a client's process may have one more event (its rate limit), write
// more bytes (max-bytes-per-client) or hold one more descriptor (the uid's share of the
// daemon's descriptors). Each check answers with the refusal to reply, counted; the per-user
// shares of issue 21 land here.
#pragma once

#include <cstdint>

#include "atraced/common/clock.h"
#include "atraced/common/log.h"
#include "atraced/service/service_types.h"
#include "atraced/store/names.h"
#include "atraced/store/trace_store.h"
#include "client.h"
#include "process_records.h"
#include "service_context.h"
#include "atraced/base/status.h"

namespace atraced {

class Admission {
 public:
  // The limits are the service's: some change on SIGHUP (TraceService::ApplyLimits).
  Admission(const ServiceContext& ctx, ProcessRecords& records)
      : records_(records), clock_(*ctx.deps.clock), log_(*ctx.deps.log), counters_(ctx.counters), deps_(ctx.deps),
        limits_(ctx.limits), refusals_(ctx.deps.store->refusals()) {}

  // The rate limit of the client's process for one more event of `kind`.
  Status AdmitEvent(const Client& c, EventKind kind);
  // max-bytes-per-client: may the client's process write `incoming` more bytes?
  Status AdmitBytes(const Client& c, uint64_t incoming);
  // Counts bytes the daemon wrote for the client's process (ring saves, reports) against it.
  void CountBytes(const Client& c, uint64_t written);
  // Takes back bytes counted for a save that wrote less than it reserved.
  void ReturnBytes(int32_t pid, uint64_t start_ticks, uint64_t unused);
  // Charges one descriptor to the client's uid, or the refusal to reply with.
  Status ChargeFd(const Client& c, FdCharge* charge);
  // Refusals come in floods from one uid: whether to log this one (one line per interval per
  // uid, whatever refused it), and how many were not logged since. The listener's sheds ask
  // the same throttle (TraceService::ShouldLogRefusal).
  bool ShouldLogRefusal(uint32_t uid, uint64_t* suppressed) { return refusals_.ShouldLog(uid, suppressed); }
  // The timer's work: one line per uid whose processes' events the rate limit refused during
  // the last interval, when the uid's refusal line is due; until then the counts wait.
  void Tick();

 private:
  ProcessRecords& records_;
  Clock& clock_;
  Logger& log_;
  ServiceCounters& counters_;
  const ServiceDependencies& deps_;
  const ServiceLimits& limits_;
  RefusalLog& refusals_;  // the daemon's one refusal throttle, which the store asks too
};

}  // namespace atraced
