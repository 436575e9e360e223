// TraceStore, events: creating, pinning and listing event directories and their files.
// Recovery is in store_recovery.cc, aging in store_aging.cc.
#include "atraced/store/trace_store.h"

#include <algorithm>

#include "atraced/store/trace_time.h"

namespace atraced {

TraceStore::TraceStore(FileSystem& fs, Remover& remover, Clock& clock, Logger& log, RefusalLog& refusals,
                       uint32_t record_num)
    : fs_(fs), remover_(remover), clock_(clock), log_(log), refusals_(refusals), record_num_(record_num) {}

TraceStore::Entry* TraceStore::FindEntry(uint64_t seq) {
  auto c = class_of_.find(seq);
  if (c == class_of_.end()) return nullptr;
  auto& map = classes_[static_cast<size_t>(c->second)];
  auto it = map.find(seq);
  return it == map.end() ? nullptr : &it->second;
}

const std::string* TraceStore::PathOf(uint64_t seq) const {
  auto c = class_of_.find(seq);
  if (c == class_of_.end()) return nullptr;
  const auto& map = classes_[static_cast<size_t>(c->second)];
  auto it = map.find(seq);
  return it == map.end() ? nullptr : &it->second.rel_path;
}

Result<BeginResult> TraceStore::BeginEvent(const EventSpec& spec, std::optional<int32_t> utc_offset_s) {
  CollectRemovals();
  if (fs_.trace_dir_generation() != trace_dir_generation_) OnTraceDirReplaced();
  if (spec.pid <= 0) return Status::Error(EINVAL, "pid: must be positive");
  std::string why;
  if (!spec.time.empty() && !IsValidTraceTime(spec.time, &why)) return Status::Error(EINVAL, "time: " + why);
  if (!IsValidTraceTime(spec.process.time) || spec.process.pid <= 0 || spec.process.pgid <= 0) {
    return Status::Error(EINVAL, "process directory name is malformed");
  }
  const auto now = clock_.Now();
  std::string proc = FormatProcessDirName(spec.process);
  std::string event = FormatEventDirName({spec.kind, spec.pid, spec.time.empty() ? FormatTraceTime(now, utc_offset_s) : spec.time});
  std::string rel;
  rel.reserve(proc.size() + 1 + event.size());  // one allocation, not operator+'s two
  rel.append(proc).append("/").append(event);

  if (auto found = by_path_.find(rel); found != by_path_.end()) {
    // Same path again (CANN: all objects of one report share a directory): same directory,
    // counted once, keeping its place in the aging order.
    Entry* same = FindEntry(found->second);
    // A directory the daemon made for a save holds only the daemon's files (order_log.h's
    // 's'): a client's event of the same name (a device event's chosen time) gets no way in.
    if (!spec.save && same->meta.saved) {
      return Status::Error(EEXIST, Abs(rel) + " was made by atraced for a save: a client opens no file in it");
    }
    if (spec.save && !same->meta.incomplete) {
      std::string record;
      AppendSaving(found->second, record);
      if (Status st = AppendLog(record); !st.ok()) return Status::Error(st.err(), "order log: " + st.message());
      same->meta.incomplete = true;
    }
    if (spec.save) ++same->saves;
    ++same->pins;
    return BeginResult{found->second, rel, false};
  }
  if (removing_paths_.count(rel)) return Status::Error(EBUSY, Abs(rel) + " is being removed by aging");
  if (Status st = MakeRoom(0, 0, spec.uid); !st.ok()) return st;

  const AgeClass c = ClassOf(spec.kind, spec.side);
  const uint64_t seq = next_seq_++;
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  // Named members: two bools sit side by side at the end (exported, saved), and a positional
  // list put the save's flag in `exported` (every save logged 'x' at birth and never 's').
  OrderEntry meta{.seq = seq, .cls = c, .device_id = spec.device_id, .uid = spec.uid, .created_us = now_us,
                  .process_dir = proc, .event_dir = std::move(event), .comm = spec.comm, .incomplete = spec.save,
                  .labels = spec.labels, .dump = spec.dump, .exported = false, .saved = spec.save};
  // The new directory and the removals it causes go to the log in one write, before mkdir.
  // The record is built in a buffer kept between events (its capacity stays).
  auto victims = PlanVictims(c, 1);
  std::string& records = records_scratch_;
  records.clear();
  AppendCreated(meta, records);
  for (const Victim& v : victims) AppendRemoved(v.it->first, records);
  if (Status st = AppendLog(records); !st.ok()) return Status::Error(st.err(), "order log: " + st.message());

  // The process directory usually exists already (every event after a process's first), so
  // create it only when making the event directory inside it says it is missing.
  Status made = fs_.MakeDir(rel);
  if (made.err() == ENOENT) {
    if (Status st = fs_.MakeDir(proc); !st.ok() && st.err() != EEXIST) {
      made = st;
    } else {
      // Before anything is made in it: what is, inherits the grant. Without it the directory
      // stays private (root and the reader group), which is safe; the owner is told why not.
      if (st.ok()) {
        if (Status granted = fs_.GrantRead(proc, spec.uid); !granted.ok()) {
          log_.Warning("uid ", spec.uid, " cannot read its own traces in ", Abs(proc), ": ", granted.message());
          WithdrawGrantStamp();  // so that the next start checks every grant
        }
      }
      made = fs_.MakeDir(rel);
    }
  }
  if (!made.ok()) {
    // Never made: say so in the log, so a directory of that name made by someone else is
    // never taken for ours. The victims were logged as removed; they go anyway (which is
    // what a full disk wants).
    std::string undo;
    AppendRemoved(seq, undo);
    (void)AppendLog(undo);
    Retire(victims, AgingReason::kCount, nullptr);
    if (made.err() == EEXIST) return Status::Error(EEXIST, Abs(rel) + " already exists and was not created by atraced");
    return made;
  }

  by_path_.insert_or_assign(rel, seq);
  class_of_[seq] = c;
  Entry e{std::move(meta), rel, spec.kind, spec.pid, 1, DiskUsage{}};
  e.has_files = false;
  e.saves = spec.save ? 1 : 0;
  classes_[static_cast<size_t>(c)].emplace(seq, std::move(e));
  ++counters_.events_created;
  log_.Debug("created event dir ", fs_.trace_dir(), "/", rel, " (class=", AgeClassName(c), ", seq=", seq, ", uid=", spec.uid, ")");
  Retire(victims, AgingReason::kCount, nullptr);  // the new directory was not among them: it was not listed yet
  // The mkdir may have found the trace directory deleted and re-created it: the new entry is
  // pinned, so it is kept and goes into the new order log.
  if (fs_.trace_dir_generation() != trace_dir_generation_) OnTraceDirReplaced();
  return BeginResult{seq, std::move(rel), true};
}

void TraceStore::EndEvent(uint64_t seq) {
  Entry* e = FindEntry(seq);
  if (e == nullptr || e->pins == 0) return;
  if (--e->pins != 0) return;
  // CANN makes an event's directory only to write a file in it; an event whose every file was
  // refused (a bad name, a full disk) or never opened leaves none, and no count changes.
  if (!e->has_files && Discard(seq, *e)) return;
  Enforce(e->meta.cls, false, nullptr);
}

void TraceStore::EndSave(uint64_t seq, bool complete) {
  Entry* e = FindEntry(seq);
  if (e == nullptr || e->saves == 0) return;
  if (!complete) e->torn = true;
  if (--e->saves != 0 || e->torn || !e->meta.incomplete) return;
  std::string record;
  AppendSaved(seq, record);
  if (Status st = AppendLog(record); !st.ok()) {
    log_.Warning("order log: cannot record that the save into ", Abs(e->rel_path), " completed: ", st.message(),
                 "; the next start lists it as incomplete");
    return;
  }
  e->meta.incomplete = false;
}

uint64_t TraceStore::IncompleteDirs() const {
  uint64_t n = 0;
  for (const ClassMap& map : classes_) {
    for (const auto& [seq, e] : map) n += e.meta.incomplete && e.saves == 0;
  }
  return n;
}

bool TraceStore::Discard(uint64_t seq, Entry& e) {
  // rmdir, not a tree delete: anything in it (a file the store did not open) keeps it.
  if (Status st = fs_.RemoveEmptyDir(e.rel_path); !st.ok()) {
    log_.Warning("cannot take back the empty event dir ", Abs(e.rel_path), ": ", st.message(), "; it stays counted");
    return false;
  }
  // The '-' record after the rmdir: a crash between the two leaves a record of a directory
  // that is gone, which recovery drops ("logged dirs gone").
  std::string record;
  AppendRemoved(seq, record);
  if (Status st = AppendLog(record); !st.ok()) {
    log_.Warning("order log: cannot record that empty event dir ", Abs(e.rel_path), " was taken back: ", st.message());
  }
  ++counters_.events_discarded;
  log_.Debug("took back empty event dir ", fs_.trace_dir(), "/", e.rel_path, " (seq=", seq, "): no file was opened in it");
  const std::string process_dir = e.meta.process_dir;
  const AgeClass c = e.meta.cls;
  by_path_.erase(e.rel_path);
  class_of_.erase(seq);
  classes_[static_cast<size_t>(c)].erase(seq);  // `e` is gone from here on
  RemoveProcessDirIfUnused(process_dir);
  return true;
}

Result<std::unique_ptr<WritableFile>> TraceStore::OpenFile(uint64_t seq, const TraceFileName& name) {
  Entry* e = FindEntry(seq);
  if (e == nullptr) return Status::Error(ENOENT, "no event with sequence " + std::to_string(seq));
  // The path is built in a buffer kept between calls: one file is opened per event.
  std::string& path = path_scratch_;
  path.assign(e->rel_path).append("/").append(name.str());
  auto file = fs_.OpenAppend(path);
  if (file.ok() && !e->has_files) {
    // Announced with its first file: an event that gets none is taken back (EndEvent).
    e->has_files = true;
    if (sink_) {
      sink_->OnStoreEvent({.kind = StoreEvent::Kind::kCreated, .path = Abs(e->rel_path), .pid = e->pid,
                           .uid = e->meta.uid, .cls = AgeClassName(e->meta.cls), .seq = seq, .bytes = 0,
                           .labels = e->meta.labels, .reason = "", .dump = DumpKind::kNone, .exported = false});
    }
  }
  return file;
}

Status TraceStore::RemoveFile(uint64_t seq, const TraceFileName& name) {
  Entry* e = FindEntry(seq);
  if (e == nullptr) return Status::Error(ENOENT, "no event with sequence " + std::to_string(seq));
  return fs_.RemoveFile(e->rel_path + "/" + name.str());
}

void TraceStore::AddBytes(uint64_t seq, DiskUsage grown) {
  counters_.bytes_written += grown.allocated;
  counters_.bytes_apparent += grown.apparent;
  space_.Wrote(grown.allocated);
  Entry* e = FindEntry(seq);
  if (e == nullptr) return;
  EnsureSized(*e);  // measured before the growth is added, so nothing counts twice
  e->bytes += grown;
  space_.AddUse(e->meta.cls, grown.allocated);
}

void TraceStore::AddHeldBytes(uint64_t seq, uint32_t uid, DiskUsage grown) {
  counters_.bytes_written += grown.allocated;
  counters_.bytes_apparent += grown.apparent;
  space_.Wrote(grown.allocated);
  Entry* e = FindEntry(seq);
  space_.Hold(uid, grown.allocated, e != nullptr);
  if (e == nullptr) return;  // aged already: the holder's alone
  EnsureSized(*e);
  e->bytes += grown;
  e->held += grown.allocated;
  space_.AddUse(e->meta.cls, grown.allocated);
}

void TraceStore::ReleaseHeld(uint64_t seq, uint32_t uid, uint64_t allocated) {
  if (space_.held_by(uid) == 0) return;  // not a holder
  const uint64_t bytes = space_.Release(uid, allocated);
  const auto c = class_of_.find(seq);
  if (c == class_of_.end()) {
    space_.Freed(bytes);  // an unlinked file: its blocks go with its last descriptor
    return;
  }
  ClassMap& map = classes_[static_cast<size_t>(c->second)];
  auto it = map.find(seq);
  Entry& e = it->second;
  const uint64_t in_dir = std::min(e.held, bytes);
  e.held -= in_dir;
  space_.Unlist(in_dir);
  const ByteNeed need = space_.NeedFor(0);
  if (need.bytes == 0 || e.pins != 0) return;
  const std::vector<Victim> first{{c->second, it}};
  if (!LogRemovals(first, "a dir written through a passed descriptor")) return;
  Retire(first, need.limit == ByteLimit::kKeepFree ? AgingReason::kKeepFree : AgingReason::kMaxUse, nullptr);
  log_.Info("aged the event dir written past ", ByteLimitName(need.limit), " through a passed descriptor of uid ", uid,
            " first; ", space_.UseLine());
  AgeForBytes(0, 0);
}

void TraceStore::HoldProcessDir(const std::string& name) { ++process_holds_[name]; }

void TraceStore::ReleaseProcessDir(const std::string& name) {
  auto it = process_holds_.find(name);
  if (it == process_holds_.end()) return;
  if (--it->second == 0) {
    process_holds_.erase(it);
    RemoveProcessDirIfUnused(name);
  }
}

void TraceStore::RemoveProcessDirIfUnused(const std::string& name) {
  if (process_holds_.count(name)) return;
  // rmdir only succeeds on an empty directory, so foreign content and exit dirs keep it.
  Status st = fs_.RemoveEmptyDir(name);
  if (st.ok()) log_.Info("removed empty process dir ", Abs(name));
}

EventInfo TraceStore::InfoOf(uint64_t seq, Entry& e) {
  EnsureSized(e);
  const Side side = e.meta.cls == AgeClass::kDevice ? Side::kDevice : Side::kHost;
  return EventInfo{seq,        e.rel_path,        e.kind,            side,              e.meta.device_id, e.pid,
                   e.meta.uid, e.meta.created_us, e.bytes.allocated, e.bytes.apparent, e.pins, e.meta.comm,
                   e.meta.incomplete && e.saves == 0, e.meta.labels, e.meta.dump, e.meta.saved};
}

std::optional<EventInfo> TraceStore::Find(uint64_t seq) {
  Entry* e = FindEntry(seq);
  if (e == nullptr) return std::nullopt;
  return InfoOf(seq, *e);
}

uint64_t TraceStore::AllocatedBytesOf(uint64_t seq) {
  Entry* e = FindEntry(seq);
  if (e == nullptr) return 0;
  EnsureSized(*e);
  return e->bytes.allocated;
}

std::vector<EventInfo> TraceStore::List(uint64_t after_seq, size_t max) {
  std::vector<std::pair<uint64_t, Entry*>> all;
  for (auto& map : classes_) {  // the `max` oldest of each class include the `max` oldest overall
    size_t taken = 0;
    for (auto it = map.upper_bound(after_seq); it != map.end() && taken < max; ++it, ++taken) {
      all.emplace_back(it->first, &it->second);
    }
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (all.size() > max) all.resize(max);
  std::vector<EventInfo> out;
  out.reserve(all.size());
  for (auto& [seq, e] : all) out.push_back(InfoOf(seq, *e));
  return out;
}

}  // namespace atraced
