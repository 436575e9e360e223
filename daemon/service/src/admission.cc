#include "admission.h"

#include <algorithm>
#include <string>

namespace atraced {

Reply Admission::AdmitEvent(const Client& c, EventKind kind) {
  if (!options_.rate_limit.enabled()) return std::nullopt;
  ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks);
  if (rec == nullptr) return std::nullopt;
  ProcessRecord& r = *rec;
  const bool final = kind != EventKind::kSchedule;
  const auto now = clock_.Now();
  if ((final ? r.final_bucket : r.schedule_bucket).Take(options_.rate_limit, now)) return std::nullopt;
  if (r.suppressed++ == 0) r.suppressed_since = now;
  if (r.program.empty()) r.program = c.program;
  ++counters_.refused_rate_limit;
  const auto& limit = options_.rate_limit;
  return Refusal{ATR_EAGAIN,
                 std::string("rate limit: this process created its ") + (final ? "exit and stackcore" : "schedule") +
                     " events faster than rate-limit-burst " + std::to_string(limit.burst) + " per rate-limit-interval " +
                     std::to_string(limit.interval.count()) + " ms; retry later",
                 false, true};
}

Reply Admission::AdmitBytes(const Client& c, uint64_t incoming) {
  const uint64_t max = options_.max_bytes_per_client;
  if (max == 0) return std::nullopt;
  const ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks);
  const uint64_t written = rec == nullptr ? 0 : rec->bytes;
  if (written + incoming <= max && written + incoming >= written) return std::nullopt;
  ++counters_.refused_client_bytes;
  return Refusal{ATR_EBUSY, "bytes: this process wrote " + std::to_string(written) + " bytes; " +
                                std::to_string(incoming) + " more would pass max-bytes-per-client " + std::to_string(max)};
}

void Admission::CountBytes(const Client& c, uint64_t written) {
  if (ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks)) rec->bytes += written;
}

void Admission::ReturnBytes(int32_t pid, uint64_t start_ticks, uint64_t unused) {
  if (ProcessRecord* rec = records_.Find(pid, start_ticks)) rec->bytes -= std::min(rec->bytes, unused);
}

Reply Admission::ChargeFd(const Client& c, FdCharge* charge) {
  FdBudget::Verdict verdict;
  *charge = FdCharge::Take(options_.fd_budget, c.peer.uid, &verdict);
  if (verdict == FdBudget::Verdict::kOk) return std::nullopt;
  // Refused requests are logged by the dispatcher; the reason names the uid and the bound.
  return Refusal{verdict == FdBudget::Verdict::kUidShare ? ATR_EBUSY : ATR_EMFILE,
                 "descriptors: " + options_.fd_budget->Describe(verdict, c.peer.uid), true};
}

bool Admission::ShouldLogRefusal(uint32_t uid, bool fd_budget, uint64_t* suppressed) {
  return fd_budget ? options_.fd_budget->ShouldLogRefusal(uid, suppressed) : refusals_.ShouldLog(uid, suppressed);
}

void Admission::Tick() {
  const auto now = clock_.Now();
  const auto& limit = options_.rate_limit;
  for (auto& [key, r] : records_) {
    const int32_t pid = key.first;
    if (r.suppressed == 0 || now - r.suppressed_since < limit.interval) continue;
    log_.Warning("suppressed ", r.suppressed, " events from pid ", pid, " (", r.program.empty() ? "unknown" : r.program,
                 ") in the last ",
                 std::chrono::duration_cast<std::chrono::seconds>(now - r.suppressed_since).count(),
                 " s: rate-limit-burst ", limit.burst, " per rate-limit-interval ",
                 std::chrono::duration_cast<std::chrono::seconds>(limit.interval).count(), " s");
    r.suppressed = 0;
  }
}

}  // namespace atraced
