#include "process_records.h"

#include "atraced/store/trace_time.h"

namespace atraced {

ProcessRecord* ProcessRecords::RecordFor(int32_t pid, const std::optional<ProcessFacts>& facts) {
  const uint64_t start = facts ? facts->start_ticks : 0;
  auto it = records_.find(pid);
  if (it != records_.end() && it->second.start_ticks == start) return &it->second;
  if (it != records_.end() && it->second.connections > 0) {
    // The same pid with a new start time while the old one is connected cannot happen for a
    // live process; keep the record that is in use.
    return &it->second;
  }
  if (records_.size() >= kMaxRecords) {
    for (auto r = records_.begin(); r != records_.end();) {
      r = (r->second.connections == 0 && !processes_.Lookup(r->first)) ? records_.erase(r) : std::next(r);
    }
  }
  // A process directory carries the time of the pid's first connection.
  ProcessRecord rec;
  rec.start_ticks = start;
  rec.name = {facts ? facts->pgid : pid, pid, FormatTraceTime(clock_.Now())};
  rec.program = facts ? facts->program : "";
  if (rec.name.pgid <= 0) rec.name.pgid = pid;
  auto [pos, inserted] = records_.insert_or_assign(pid, rec);
  (void)inserted;
  return &pos->second;
}

void ProcessRecords::Disconnected(int32_t pid, const std::string& process_dir) {
  if (auto rec = records_.find(pid); rec != records_.end() && FormatProcessDirName(rec->second.name) == process_dir &&
                                     rec->second.connections > 0) {
    --rec->second.connections;
  }
}

}  // namespace atraced
