#include "process_names.h"

#include "atraced/store/trace_time.h"

namespace atraced {

void SettleProcessName(Client& c, ProcessRecords& records, ClientTable& clients, TraceStore& store) {
  ProcessRecord* rec = records.Find(c.peer.pid, c.start_ticks);
  if (rec == nullptr || rec->name_settled) return;
  rec->name_settled = true;
  if (!c.utc_offset_s) return;
  rec->utc_offset_s = c.utc_offset_s;
  ProcessDirName renamed = rec->name;
  renamed.time = FormatTraceTime(rec->first_connected, rec->utc_offset_s);
  const std::string old_dir = FormatProcessDirName(rec->name);
  const std::string new_dir = FormatProcessDirName(renamed);
  rec->name = renamed;
  for (auto& [id, other] : clients) {
    if (other.peer.pid != c.peer.pid || other.start_ticks != c.start_ticks) continue;
    other.utc_offset_s = rec->utc_offset_s;
    if (other.process_dir != old_dir || new_dir == old_dir) continue;
    store.HoldProcessDir(new_dir);
    store.ReleaseProcessDir(old_dir);  // never made: nothing of it is on disk
    other.process_dir = new_dir;
    other.process_name = ParseProcessDirName(new_dir);
  }
}

}  // namespace atraced
