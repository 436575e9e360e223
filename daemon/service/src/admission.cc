#include "admission.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace atraced {

Status Admission::AdmitEvent(const Client& c, EventKind kind) {
  if (!limits_.rate_limit.enabled()) return Status::Ok();
  ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks);
  if (rec == nullptr) return Status::Ok();
  ProcessRecord& r = *rec;
  const bool final = kind != EventKind::kSchedule;
  const auto now = clock_.Now();
  if ((final ? r.final_bucket : r.schedule_bucket).Take(limits_.rate_limit, now)) return Status::Ok();
  if (r.suppressed++ == 0) r.suppressed_since = now;
  r.uid = c.peer.uid;
  if (r.program.empty()) r.program = c.program;
  ++counters_.refused_rate_limit;
  const auto& limit = limits_.rate_limit;
  return Status::Error(EAGAIN, std::string("rate limit: this process created its ") + (final ? "exit and stackcore" : "schedule") +
                     " events faster than rate-limit-burst " + std::to_string(limit.burst) + " per rate-limit-interval " +
                     std::to_string(limit.interval.count()) + " ms; retry later", Status::LogAs::kSummarized);
}

Status Admission::AdmitBytes(const Client& c, uint64_t incoming) {
  const uint64_t max = limits_.max_bytes_per_client;
  if (max == 0) return Status::Ok();
  const ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks);
  const uint64_t written = rec == nullptr ? 0 : rec->bytes;
  if (written + incoming <= max && written + incoming >= written) return Status::Ok();
  ++counters_.refused_client_bytes;
  return Status::Error(EBUSY, "bytes: this process wrote " + std::to_string(written) + " bytes; " +
                                std::to_string(incoming) + " more would pass max-bytes-per-client " + std::to_string(max));
}

void Admission::CountBytes(const Client& c, uint64_t written) {
  if (ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks)) rec->bytes += written;
}

void Admission::ReturnBytes(int32_t pid, uint64_t start_ticks, uint64_t unused) {
  if (ProcessRecord* rec = records_.Find(pid, start_ticks)) rec->bytes -= std::min(rec->bytes, unused);
}

Status Admission::ChargeFd(const Client& c, FdCharge* charge) {
  FdBudget::Verdict verdict;
  *charge = FdCharge::Take(deps_.fd_budget, c.peer.uid, &verdict);
  if (verdict == FdBudget::Verdict::kOk) return Status::Ok();
  // Refused requests are logged by the dispatcher; the reason names the uid and the bound.
  return Status::Error(verdict == FdBudget::Verdict::kUidShare ? EBUSY : EMFILE, "descriptors: " + deps_.fd_budget->Describe(verdict, c.peer.uid), Status::LogAs::kWarning);
}

void Admission::Tick() {
  const auto now = clock_.Now();
  const auto& limit = limits_.rate_limit;
  // A uid's processes are summed into one line: a user who starts many processes, each
  // over its limit, is still one line per interval.
  struct Summary {
    std::vector<ProcessRecord*> due;
    int32_t first_pid = 0;
    uint64_t events = 0;
    std::chrono::system_clock::time_point since = std::chrono::system_clock::time_point::max();
  };
  std::map<uint32_t, Summary> by_uid;
  for (auto& [key, r] : records_) {
    if (r.suppressed == 0 || now - r.suppressed_since < limit.interval) continue;
    Summary& s = by_uid[r.uid];
    if (s.due.empty()) s.first_pid = key.first;
    s.due.push_back(&r);
    s.events += r.suppressed;
    s.since = std::min(s.since, r.suppressed_since);
  }
  for (auto& [uid, s] : by_uid) {
    if (!refusals_.Due(uid)) continue;  // the counts wait for the uid's next line
    uint64_t other_refusals = 0;
    refusals_.ShouldLog(uid, &other_refusals);
    const ProcessRecord& first = *s.due.front();
    const std::string from = s.due.size() == 1 ? "pid " + std::to_string(s.first_pid) + " (" +
                                                     (first.program.empty() ? "unknown" : first.program) + ")"
                                               : std::to_string(s.due.size()) + " processes of uid " +
                                                     std::to_string(uid) + " (pid " + std::to_string(s.first_pid) +
                                                     " the first)";
    log_.Warning("suppressed ", s.events, " events from ", from, " in the last ",
                 std::chrono::duration_cast<std::chrono::seconds>(now - s.since).count(),
                 " s: rate-limit-burst ", limit.burst, " per rate-limit-interval ",
                 std::chrono::duration_cast<std::chrono::seconds>(limit.interval).count(), " s",
                 other_refusals > 0 ? " (" + std::to_string(other_refusals) + " more refusals for this uid since its last line)"
                                    : "");
    for (ProcessRecord* r : s.due) r->suppressed = 0;
  }
}

}  // namespace atraced
