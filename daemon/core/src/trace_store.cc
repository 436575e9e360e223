#include "atraced/core/trace_store.h"

#include <algorithm>
#include <set>

#include "atraced/core/trace_time.h"

namespace atraced {

const char* AgeClassName(AgeClass c) {
  switch (c) {
    case AgeClass::kHost: return "host";
    case AgeClass::kDevice: return "device";
    case AgeClass::kExit: return "exit";
  }
  return "?";
}

TraceStore::TraceStore(FileSystem& fs, Clock& clock, Logger& log, uint32_t record_num)
    : fs_(fs), clock_(clock), log_(log), record_num_(record_num) {}

TraceStore::Entry* TraceStore::FindEntry(uint64_t seq, AgeClass* cls) {
  auto c = class_of_.find(seq);
  if (c == class_of_.end()) return nullptr;
  auto& map = classes_[static_cast<size_t>(c->second)];
  auto it = map.find(seq);
  if (it == map.end()) return nullptr;
  if (cls) *cls = c->second;
  return &it->second;
}

Status TraceStore::Recover() {
  for (auto& m : classes_) m.clear();
  class_of_.clear();
  by_path_.clear();
  uint64_t max_seq = 0;
  size_t unmanaged = 0, staging_removed = 0;

  auto top = fs_.ListDir("");
  if (!top.ok()) return top.status();
  for (const DirEntry& pd : *top) {
    if (pd.type != DirEntry::Type::kDirectory || !ParseProcessDirName(pd.name)) continue;
    auto kids = fs_.ListDir(pd.name);
    if (!kids.ok()) {
      log_.Warning("recovery: cannot list ", Abs(pd.name), ": ", kids.status().message());
      continue;
    }
    bool swept = false;
    for (const DirEntry& kid : *kids) {
      if (kid.type != DirEntry::Type::kDirectory) continue;
      std::string rel = pd.name + "/" + kid.name;
      if (auto staged = ParseStagingName(kid.name)) {
        // An interrupted creation: never published, never counted.
        max_seq = std::max(max_seq, *staged);
        if (Status st = fs_.RemoveTree(rel); st.ok()) {
          ++staging_removed;
          swept = true;
          log_.Notice("recovery: removed half-made event dir ", Abs(rel));
        } else {
          log_.Warning("can not remove dir ", Abs(rel), ": ", st.message());
        }
        continue;
      }
      auto name = ParseEventDirName(kid.name);
      if (!name) continue;
      auto files = fs_.ListDir(rel);
      if (!files.ok()) {
        log_.Warning("recovery: cannot list ", Abs(rel), ": ", files.status().message());
        continue;
      }
      std::optional<EventMarker> marker;
      for (const DirEntry& f : *files) {
        if (f.type != DirEntry::Type::kRegular) continue;
        if (auto m = ParseMarkerName(f.name); m && (!marker || m->seq < marker->seq)) marker = m;
      }
      if (!marker) {  // not created by atraced (e.g. an in-process CANN recorder): not ours
        ++unmanaged;
        continue;
      }
      if (class_of_.count(marker->seq)) {
        log_.Warning("recovery: ", Abs(rel), " repeats sequence ", marker->seq, "; left unmanaged");
        ++unmanaged;
        continue;
      }
      AgeClass c = ClassOf(name->kind, marker->side);
      Entry e{rel, pd.name, name->kind, *marker, name->pid, 0, std::nullopt};
      classes_[static_cast<size_t>(c)].emplace(marker->seq, std::move(e));
      class_of_[marker->seq] = c;
      by_path_[rel] = marker->seq;
      max_seq = std::max(max_seq, marker->seq);
    }
    if (swept) RemoveProcessDirIfUnused(pd.name);
  }
  next_seq_ = max_seq + 1;
  log_.Info("recovered ", count(AgeClass::kHost), " host, ", count(AgeClass::kDevice), " device and ",
            count(AgeClass::kExit), " exit event dirs under ", fs_.trace_dir(), " (", unmanaged,
            " not managed by atraced, ", staging_removed, " half-made removed); record num ", record_num_);
  AgingReport report;
  Enforce(AgeClass::kHost, false, &report);
  Enforce(AgeClass::kDevice, false, &report);
  return Status::Ok();
}

Result<BeginResult> TraceStore::BeginEvent(const EventSpec& spec) {
  std::string why;
  if (spec.pid <= 0) return Status::Error(EINVAL, "pid: must be positive");
  if (!spec.time.empty() && !IsValidTraceTime(spec.time, &why)) return Status::Error(EINVAL, "time: " + why);
  if (!IsValidTraceTime(spec.process.time) || spec.process.pid <= 0 || spec.process.pgid <= 0) {
    return Status::Error(EINVAL, "process directory name is malformed");
  }
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             clock_.Now().time_since_epoch()).count();
  std::string time = spec.time.empty() ? FormatTraceTime(clock_.Now()) : spec.time;
  std::string proc = FormatProcessDirName(spec.process);
  std::string rel = proc + "/" + FormatEventDirName({spec.kind, spec.pid, time});

  if (auto found = by_path_.find(rel); found != by_path_.end()) {
    // Same path again (CANN: all objects of one report share a directory): same directory,
    // counted once, keeping its place in the aging order.
    Entry* e = FindEntry(found->second);
    ++e->pins;
    return BeginResult{found->second, rel, false};
  }

  const uint64_t seq = next_seq_++;
  const std::string staging = proc + "/" + FormatStagingName(seq);
  EventMarker marker{seq, spec.side, spec.device_id, spec.uid, now_us};
  auto abandon = [&](Status st) -> Result<BeginResult> {
    if (Status rm = fs_.RemoveTree(staging); !rm.ok()) log_.Warning("can not remove dir ", Abs(staging), ": ", rm.message());
    return st;
  };
  // The process directory usually exists already (every event after a process's first), so
  // create it only when building the staging directory inside it says it is missing.
  Status staged = fs_.MakeDir(staging);
  if (staged.err() == ENOENT) {
    if (Status st = fs_.MakeDir(proc); !st.ok() && st.err() != EEXIST) return st;
    staged = fs_.MakeDir(staging);
  }
  if (!staged.ok()) return staged;
  if (Status st = fs_.CreateEmptyFile(staging + "/" + FormatMarkerName(marker)); !st.ok()) return abandon(st);
  if (Status st = fs_.Rename(staging, rel); !st.ok()) {
    if (st.err() == EEXIST) {
      return abandon(Status::Error(EEXIST, Abs(rel) + " already exists and was not created by atraced"));
    }
    return abandon(st);
  }

  AgeClass c = ClassOf(spec.kind, spec.side);
  classes_[static_cast<size_t>(c)].emplace(seq, Entry{rel, proc, spec.kind, marker, spec.pid, 1, 0});
  class_of_[seq] = c;
  by_path_[rel] = seq;
  ++counters_.events_created;
  log_.Info("created event dir ", Abs(rel), " (class=", AgeClassName(c), ", seq=", seq, ", uid=", spec.uid, ")");
  if (sink_) sink_->OnStoreEvent({StoreEvent::Kind::kCreated, Abs(rel), spec.pid, spec.uid, AgeClassName(c), seq, 0});
  AgingReport report;
  Enforce(c, false, &report);  // the new directory is pinned, so it is never the victim
  return BeginResult{seq, rel, true};
}

void TraceStore::EndEvent(uint64_t seq) {
  AgeClass c;
  Entry* e = FindEntry(seq, &c);
  if (e == nullptr || e->pins == 0) return;
  if (--e->pins == 0) {
    AgingReport report;
    Enforce(c, false, &report);
  }
}

Result<UniqueFd> TraceStore::OpenFile(uint64_t seq, const std::string& file_name) {
  Entry* e = FindEntry(seq);
  if (e == nullptr) return Status::Error(ENOENT, "no event with sequence " + std::to_string(seq));
  if (!IsTraceFileName(file_name)) return Status::Error(EINVAL, "file name [" + file_name + "] is not a trace file name");
  return fs_.OpenAppend(e->rel_path + "/" + file_name);
}

void TraceStore::AddBytes(uint64_t seq, uint64_t bytes) {
  counters_.bytes_written += bytes;
  if (Entry* e = FindEntry(seq); e != nullptr && e->bytes) *e->bytes += bytes;
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

void TraceStore::SetRecordNum(uint32_t record_num) {
  if (record_num != record_num_) log_.Notice("record num changed from ", record_num_, " to ", record_num);
  record_num_ = record_num;
  AgingReport report;
  Enforce(AgeClass::kHost, false, &report);
  Enforce(AgeClass::kDevice, false, &report);
}

AgingReport TraceStore::Vacuum(bool dry_run) {
  AgingReport report;
  Enforce(AgeClass::kHost, dry_run, &report);
  Enforce(AgeClass::kDevice, dry_run, &report);
  return report;
}

void TraceStore::Enforce(AgeClass c, bool dry_run, AgingReport* report) {
  if (!IsAged(c)) return;
  ClassMap& map = classes_[static_cast<size_t>(c)];
  std::set<uint64_t> failed;  // failed in this pass: skipped now, retried on the next pass
  while (map.size() > record_num_) {
    auto victims = PlanAging(map.begin(), map.end(), map.size(), record_num_, [&](const auto& kv) {
      return kv.second.pins == 0 && !failed.count(kv.first);
    });
    if (victims.empty()) return;  // everything left is pinned: enforced when a pin is released
    if (dry_run) {
      for (auto it : victims) report->removed.push_back(it->second.rel_path);
      return;
    }
    for (auto it : victims) {
      const uint64_t seq = it->first;
      const std::string rel = it->second.rel_path;
      const std::string proc = it->second.process_dir;
      const int32_t pid = it->second.pid;
      const uint32_t uid = it->second.marker.uid;
      const uint64_t bytes = it->second.bytes.value_or(0);
      if (Status st = fs_.RemoveTree(rel); !st.ok()) {
        // Still on disk, so it keeps counting; it stays first in line for the next pass.
        failed.insert(seq);
        ++counters_.removal_failures;
        report->failed.push_back(rel);
        log_.Warning("can not remove dir ", Abs(rel), ", errno=", st.err(), ": ", st.message());
        continue;
      }
      map.erase(it);
      class_of_.erase(seq);
      by_path_.erase(rel);
      ++counters_.dirs_aged;
      report->removed.push_back(rel);
      log_.Info("aged event dir ", Abs(rel), " (class=", AgeClassName(c), ", seq=", seq, ")");
      if (sink_) sink_->OnStoreEvent({StoreEvent::Kind::kAged, Abs(rel), pid, uid, AgeClassName(c), seq, bytes});
      RemoveProcessDirIfUnused(proc);
    }
  }
}

EventInfo TraceStore::InfoOf(uint64_t seq, Entry& e) {
  if (!e.bytes) {
    auto bytes = fs_.TreeBytes(e.rel_path);
    if (bytes.ok()) e.bytes = *bytes;
  }
  return EventInfo{seq,          e.rel_path, e.kind, e.marker.side, e.marker.device_id, e.pid,
                   e.marker.uid, e.marker.created_us, e.bytes.value_or(0), e.pins};
}

std::optional<EventInfo> TraceStore::Find(uint64_t seq) {
  Entry* e = FindEntry(seq);
  if (e == nullptr) return std::nullopt;
  return InfoOf(seq, *e);
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
