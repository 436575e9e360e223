#include "process_records.h"

#include "atraced/base/time_span.h"
#include "atraced/store/trace_time.h"

namespace atraced {

ProcessRecord* ProcessRecords::FindConnected(int32_t pid) {
  for (auto it = records_.lower_bound({pid, 0}); it != records_.end() && it->first.first == pid; ++it) {
    if (it->second.connections > 0) return &it->second;
  }
  return nullptr;
}

ProcessRecord* ProcessRecords::RecordFor(int32_t pid, const std::optional<ProcessFacts>& facts) {
  const Key key{pid, facts ? facts->start_ticks : 0};
  if (auto it = records_.find(key); it != records_.end()) return &it->second;
  if (records_.size() >= kMaxRecords) {
    for (auto r = records_.begin(); r != records_.end();) {
      bool gone = r->second.connections == 0;
      if (gone) {
        auto now = processes_.Lookup(r->first.first);
        gone = !now || now->start_ticks != r->first.second;
      }
      r = gone ? records_.erase(r) : std::next(r);
    }
  }
  // A process directory carries the time of the process's first connection.
  ProcessRecord rec;
  rec.start_ticks = key.second;
  rec.first_connected = clock_.Now();
  rec.name = {facts ? facts->pgid : pid, pid, FormatTraceTime(rec.first_connected)};
  rec.program = facts ? facts->program : "";
  if (rec.name.pgid <= 0) rec.name.pgid = pid;
  return &records_.emplace(key, std::move(rec)).first->second;
}

void ProcessRecords::Disconnected(int32_t pid, uint64_t start_ticks) {
  if (ProcessRecord* rec = Find(pid, start_ticks); rec != nullptr && rec->connections > 0) --rec->connections;
}

Status ApplyLabels(Client& c, std::span<const uint8_t> payload, ClientTable& clients, ProcessRecords& records,
                   Logger& log, const std::function<void(const Client&)>& started) {
  if (!(c.features & ATR_FEATURE_LABELS)) return Status::Error(ENOTSUP, "LABELS: ATR_FEATURE_LABELS was not negotiated in HELLO");
  proto::LabelsRequest request;
  if (Status st = proto::Decode(payload, &request); !st.ok()) return st;
  if (!request.hang_timeout.empty() && !(c.features & ATR_FEATURE_HANG_TIMEOUT)) {
    return Status::Error(EBADMSG, "LABELS: hang_timeout sent but ATR_FEATURE_HANG_TIMEOUT was not negotiated in HELLO");
  }
  const proto::Labels& m = request.labels;
  bool fresh = !(c.labels == m);
  if (ProcessRecord* rec = records.Find(c.peer.pid, c.start_ticks)) {
    fresh = !(rec->labels == m);
    rec->labels = m;
  }
  std::optional<std::chrono::milliseconds> asked;
  if (!request.hang_timeout.empty()) asked = ParseTimeSpan(request.hang_timeout);  // checked by Decode
  for (auto& [id, other] : clients) {
    if (other.peer.pid != c.peer.pid || other.start_ticks != c.start_ticks) continue;
    other.labels = m;
    other.hang_timeout = asked;
  }
  c.labels = m;
  c.hang_timeout = asked;
  // Checked to be short and printable, so the line needs no escaping beyond the logger's.
  log.Info("pid ", c.peer.pid, " labels: job '", m.job, "' rank '", m.rank, "' world size '", m.world_size, "'",
           request.hang_timeout.empty() ? "" : " hang timeout " + request.hang_timeout);
  if (fresh) started(c);
  return Status::Ok();
}

}  // namespace atraced
