#include "process_records.h"

#include <algorithm>

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

ProcessRecord* ProcessRecords::RecordForConnection(int32_t pid, const std::optional<ProcessFacts>& facts, uint32_t uid) {
  ProcessRecord* rec = RecordFor(pid, facts);
  if (!rec->owner_uid || *rec->owner_uid == uid) {
    rec->owner_uid = uid;
    return rec;
  }
  const std::string old_dir = FormatProcessDirName(rec->name);
  // Named with this connection's time, and never the old directory's name, even within its
  // microsecond.
  rec->first_connected = std::max(clock_.Now(), rec->first_connected + std::chrono::microseconds(1));
  rec->name.time = FormatTraceTime(rec->first_connected);
  rec->name_settled = false;
  rec->utc_offset_s.reset();
  rec->labels = {};  // the new program says its own
  log_.Notice("pid ", pid, " connected as uid ", uid, ", its directory ", old_dir, " is uid ", *rec->owner_uid,
              "'s (an exec of a set-id program, or a setuid call): its traces from now on go to ",
              FormatProcessDirName(rec->name), ", readable by uid ", uid, " alone");
  rec->owner_uid = uid;
  return rec;
}

void ProcessRecords::Disconnected(int32_t pid, uint64_t start_ticks) {
  if (ProcessRecord* rec = Find(pid, start_ticks); rec != nullptr && rec->connections > 0) --rec->connections;
}

bool ProcessRecords::ShouldLogLabels(uint32_t uid, uint64_t* suppressed) {
  // The service's clock, so that tests may move it.
  const auto now = RefusalLog::TimePoint(
      std::chrono::duration_cast<RefusalLog::TimePoint::duration>(clock_.Now().time_since_epoch()));
  return label_lines_.ShouldLog(uid, now, suppressed);
}

Status ApplyLabels(Client& c, std::span<const uint8_t> payload, ClientTable& clients, ProcessRecords& records,
                   Logger& log, const std::function<void(const Client&)>& started) {
  proto::LabelsRequest request;  // ATR_FEATURE_LABELS was checked from opcode_rules.h
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
  if (uint64_t suppressed = 0; records.ShouldLogLabels(c.peer.uid, &suppressed)) {
    log.Info("pid ", c.peer.pid, " labels: job '", m.job, "' rank '", m.rank, "' world size '", m.world_size, "'",
             request.hang_timeout.empty() ? "" : " hang timeout " + request.hang_timeout,
             suppressed > 0 ? " (" + std::to_string(suppressed) + " more LABELS of uid " + std::to_string(c.peer.uid) +
                                  " accepted since its last line)"
                            : "");
  }
  if (fresh) started(c);
  return Status::Ok();
}

}  // namespace atraced
