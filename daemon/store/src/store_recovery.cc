// TraceStore, recovery and the order log: rebuilding the lists from the log and the tree at
// start, sizing what was recovered, the log's appends and rewrites, and a trace directory
// that was deleted under the daemon.
#include "atraced/store/trace_store.h"

#include <errno.h>

#include <algorithm>
#include <set>

#include "atraced/store/trace_time.h"

namespace atraced {

namespace {

std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// A directory atraced 0.1 made: its marker gave the order and the class.
struct LegacyDir {
  EventMarker marker;
  std::string process_dir;
  std::string event_dir;
  EventKind kind;
};

}  // namespace

void TraceStore::Adopt(OrderEntry meta) {
  auto name = ParseEventDirName(meta.event_dir);
  Entry e;
  e.rel_path = meta.process_dir + "/" + meta.event_dir;
  e.kind = name ? name->kind : EventKind::kSchedule;
  e.pid = name ? name->pid : 0;
  // The byte budget needs every directory's size: measured after start (SizeRecovered), then
  // kept up to date as it is written.
  e.sized = false;
  e.torn = meta.incomplete;  // no later save makes what a cut-short one left complete
  const uint64_t seq = meta.seq;
  const AgeClass c = meta.cls;
  unsized_.push_back(seq);
  by_path_[e.rel_path] = seq;
  class_of_[seq] = c;
  e.meta = std::move(meta);
  classes_[static_cast<size_t>(c)].emplace(seq, std::move(e));
}

Status TraceStore::Recover() {
  trace_dir_generation_ = fs_.trace_dir_generation();
  if (Status st = ResolveLimits(); !st.ok()) return st;
  space_.ForgetUse();
  unsized_.clear();
  for (auto& m : classes_) m.clear();
  class_of_.clear();
  by_path_.clear();
  pending_.clear();
  failed_.clear();
  aged_dumps_.clear();
  log_file_.reset();

  // The order log, if there is one; a tree from atraced 0.1 has markers instead.
  std::optional<OrderLogReplay> replay;
  auto text = fs_.ReadFile(std::string(kOrderLogName), kMaxOrderLogBytes);
  if (text.ok()) {
    replay = ReplayOrderLog(*text);
    aged_dumps_.assign(replay->aged.begin(), replay->aged.end());
    if (replay->rejected > 0) {
      log_.Warning("order log ", Abs(std::string(kOrderLogName)), ": ", replay->rejected, " line(s) rejected, first: ",
                   replay->problems.empty() ? "" : replay->problems.front());
    }
  } else if (text.status().err() != ENOENT) {
    return Status::Error(text.status().err(), "cannot read the order log: " + text.status().message());
  }

  // The tree: which event directories exist (and, for a 0.1 tree, their markers).
  std::set<std::string> present;
  std::vector<LegacyDir> legacy;
  std::vector<RemovalJob> sweeps;  // 0.1's half-made staging dirs
  std::set<std::string> process_dirs;
  auto top = fs_.ListDir("");
  if (!top.ok()) return top.status();
  for (const DirEntry& pd : *top) {
    if (pd.type != DirEntry::Type::kDirectory || !ParseProcessDirName(pd.name)) continue;
    process_dirs.insert(pd.name);
    auto kids = fs_.ListDir(pd.name);
    if (!kids.ok()) {
      log_.Warning("recovery: cannot list ", Abs(pd.name), ": ", kids.status().message());
      continue;
    }
    for (const DirEntry& kid : *kids) {
      if (kid.type != DirEntry::Type::kDirectory) continue;
      std::string rel = pd.name + "/" + kid.name;
      if (!replay && ParseStagingName(kid.name)) {
        sweeps.push_back({0, rel, pd.name, true, 0});
        continue;
      }
      auto name = ParseEventDirName(kid.name);
      if (!name) continue;
      present.insert(rel);
      if (replay) continue;
      auto files = fs_.ListDir(rel);
      if (!files.ok()) continue;
      std::optional<EventMarker> marker;
      for (const DirEntry& f : *files) {
        if (f.type != DirEntry::Type::kRegular) continue;
        if (auto m = ParseMarkerName(f.name); m && (!marker || m->seq < marker->seq)) marker = m;
      }
      if (marker) legacy.push_back({*marker, pd.name, kid.name, name->kind});
    }
  }

  // What is ours, oldest first. Numbers from the tree only order it: everything is
  // renumbered 1..N below, so no planted number can wrap the counter or collide.
  std::vector<OrderEntry> live;
  std::vector<OrderEntry> finishing;
  std::map<std::string, uint32_t> unfinished;  // process dirs of records whose event dir never appeared
  size_t dropped = 0;
  if (replay) {
    std::set<std::string> live_paths;
    for (OrderEntry& e : replay->live) {
      std::string rel = e.process_dir + "/" + e.event_dir;
      if (!present.count(rel)) {
        ++dropped;  // never made (a crash after its record), or removed by someone else
        if (process_dirs.count(e.process_dir)) unfinished.emplace(e.process_dir, e.uid);
        continue;
      }
      live_paths.insert(rel);
      live.push_back(std::move(e));
    }
    for (OrderEntry& e : replay->removing) {
      std::string rel = e.process_dir + "/" + e.event_dir;
      if (present.count(rel) && !live_paths.count(rel)) finishing.push_back(std::move(e));
    }
  } else {
    std::sort(legacy.begin(), legacy.end(), [](const LegacyDir& a, const LegacyDir& b) {
      return a.marker.seq != b.marker.seq ? a.marker.seq < b.marker.seq : a.event_dir < b.event_dir;
    });
    std::set<std::string> seen;
    for (LegacyDir& d : legacy) {
      if (!seen.insert(d.process_dir + "/" + d.event_dir).second) continue;
      live.push_back({0, ClassOf(d.kind, d.marker.side), d.marker.device_id, d.marker.uid, d.marker.created_us,
                      d.process_dir, d.event_dir, ""});
    }
    if (!legacy.empty() || !sweeps.empty()) {
      log_.Notice("recovery: no order log; adopted ", live.size(), " event dirs of atraced 0.1 by their markers and ",
                  "removing ", sweeps.size(), " half-made ones");
    }
  }
  const std::string stamp = fs_.GrantStamp();
  const bool vouched = replay && !stamp.empty() && replay->grant_stamp == stamp;
  grant_stamp_ = GrantRecovered(live, vouched, unfinished) ? stamp : std::string();
  uint64_t seq = 0;
  for (OrderEntry& e : live) {
    e.seq = ++seq;
    Adopt(std::move(e));
  }
  std::vector<RemovalJob> resumed;
  resumed.reserve(finishing.size());
  for (OrderEntry& e : finishing) {
    e.seq = ++seq;
    resumed.push_back(RemovalJob{e.seq, e.process_dir + "/" + e.event_dir, e.process_dir, true, 0});
    removing_paths_.insert(resumed.back().rel_path);
    pending_.emplace(e.seq, Pending{std::move(e), 0, false});
  }
  next_seq_ = seq + 1;
  const size_t unmanaged = present.size() - live.size() - finishing.size();
  const uint64_t incomplete = IncompleteDirs();

  SweepAside(&sweeps);

  // The compacted log goes down before any removal starts, so a crash now still finishes them.
  if (Status st = RewriteLog(); !st.ok()) return Status::Error(st.err(), "cannot write the order log: " + st.message());
  for (RemovalJob& j : resumed) remover_.Submit(std::move(j));
  sweeps_outstanding_ = sweeps.size();
  for (RemovalJob& j : sweeps) remover_.Submit(j);

  log_.Info("recovered ", count(AgeClass::kHost), " host, ", count(AgeClass::kDevice), " device and ",
            count(AgeClass::kExit), " exit event dirs under ", fs_.trace_dir(), " (", unmanaged,
            " not managed by atraced, ", finishing.size() + sweeps.size(), " interrupted removals resumed, ", dropped,
            " logged dirs gone, ", incomplete,
            " incomplete saves); record num ", record_num_, ", exit record num ", exit_record_num_, "; ", space_.UseLine());
  if (incomplete != 0) {
    log_.Warning("recovery: ", incomplete, " event dir(s) hold a save that was cut short (a crash or a stop while it ",
                 "was written): their files may be empty or short; `atracectl list` marks them incomplete");
  }
  for (AgeClass c : kAllAgeClasses) Enforce(c, false, nullptr);
  AgeByTime();
  AgeForBytes(0, 0);
  return Status::Ok();
}

bool TraceStore::GrantRecovered(const std::vector<OrderEntry>& live, bool vouched,
                                const std::map<std::string, uint32_t>& unfinished) {
  // One uid per process directory: the oldest logged one's (the process it was made for).
  std::map<std::string, uint32_t> owners;
  for (const OrderEntry& e : live) owners.emplace(e.process_dir, e.uid);
  size_t repaired = 0, failed = 0;
  auto grant = [&](const std::string& dir, uint32_t uid, bool recheck) {
    auto changed = recheck ? fs_.RecheckGrant(dir, uid) : fs_.RepairGrant(dir, uid);
    if (!changed.ok()) {
      ++failed;
      log_.Warning("recovery: cannot make ", Abs(dir), " readable by uid ", uid, " only: ", changed.status().message());
    } else if (*changed) {
      ++repaired;
    }
  };
  for (const auto& [dir, uid] : owners) grant(dir, uid, vouched);
  for (const auto& [dir, uid] : unfinished) {
    if (!owners.count(dir)) grant(dir, uid, false);
  }
  if (repaired != 0) {
    log_.Notice("recovery: ", repaired, " process dir(s) had no read grant or another one (written by an older atraced, ",
                "or under another reader-group, or changed since): each is now readable by its own uid, root and the ",
                "reader group only");
  }
  return failed == 0;
}

void TraceStore::WithdrawGrantStamp() {
  if (grant_stamp_.empty()) return;
  grant_stamp_.clear();
  std::string record;
  AppendGrantStamp("", record);
  if (Status st = AppendLog(record); !st.ok()) log_.Warning("order log: ", st.message());
}

void TraceStore::SweepAside(std::vector<RemovalJob>* sweeps) {
  const std::string aside(kAsideDirName);
  aside_serial_ = 1;
  auto left = fs_.ListDir(aside);
  if (!left.ok()) {
    // Made now, so the first aging pays one rename and nothing more.
    if (left.status().err() != ENOENT) {
      log_.Warning("recovery: cannot list ", Abs(aside), ": ", left.status().message());
    } else if (Status st = fs_.MakeDir(aside); !st.ok() && st.err() != EEXIST) {
      log_.Warning("recovery: cannot make ", Abs(aside), ": ", st.message(), "; aged dirs are deleted in place");
    }
    return;
  }
  // Moved aside by an earlier run and not yet deleted: everything in it is ours to delete.
  for (const DirEntry& d : *left) {
    if (auto serial = ParseAsideSerial(d.name)) aside_serial_ = std::max(aside_serial_, *serial + 1);
    sweeps->push_back({0, aside + "/" + d.name, "", false, 0});
  }
}

Status TraceStore::OpenLog() {
  auto f = fs_.OpenAppend(std::string(kOrderLogName));
  if (!f.ok()) return f.status();
  log_file_ = std::move(*f);
  return Status::Ok();
}

Status TraceStore::RewriteLog() {
  // Every record in sequence order: the live entries and the removals not yet finished.
  std::map<uint64_t, std::pair<const OrderEntry*, bool>> all;
  for (const auto& map : classes_) {
    for (const auto& [seq, e] : map) all.emplace(seq, std::make_pair(&e.meta, false));
  }
  for (const auto& [seq, p] : pending_) all.emplace(seq, std::make_pair(&p.meta, true));
  std::string text(kOrderLogHeader);
  if (!grant_stamp_.empty()) AppendGrantStamp(grant_stamp_, text);
  for (const AgedDump& aged : aged_dumps_) AppendAged(aged, text);
  for (const auto& [seq, rec] : all) {
    AppendCreated(*rec.first, text);
    if (rec.second) AppendRemoved(seq, text);
  }
  log_file_.reset();
  if (Status st = fs_.ReplaceFile(std::string(kOrderLogName), Bytes(text)); !st.ok()) return st;
  log_records_ = all.size() + pending_.size() + aged_dumps_.size();
  return OpenLog();
}

Status TraceStore::AppendLog(const std::string& records) {
  if (!log_file_) {
    if (Status st = OpenLog(); !st.ok()) return st;
  }
  if (Status st = log_file_->Append(Bytes(records)); !st.ok()) return st;
  log_records_ += static_cast<size_t>(std::count(records.begin(), records.end(), '\n'));
  size_t live = class_of_.size() + pending_.size();
  if (log_records_ > live + kCompactSlack) {
    if (Status st = RewriteLog(); !st.ok()) log_.Warning("cannot compact the order log: ", st.message());
  }
  return Status::Ok();
}

void TraceStore::EnsureSized(Entry& e) {
  if (e.sized) return;
  e.sized = true;
  auto bytes = fs_.TreeBytes(e.rel_path);
  e.bytes = bytes.ok() ? *bytes : DiskUsage{};
  space_.AddUse(e.meta.cls, e.bytes.allocated);
}

size_t TraceStore::SizeRecovered(size_t max) {
  if (unsized_.empty()) return 0;
  size_t done = 0;
  for (; done < max && !unsized_.empty(); ++done) {
    const uint64_t seq = unsized_.back();
    unsized_.pop_back();
    if (Entry* e = FindEntry(seq)) EnsureSized(*e);  // aged meanwhile: nothing to size
  }
  if (unsized_.empty()) {
    log_.Info("sized the recovered event dirs; ", space_.UseLine());
    AgeForBytes(0, 0);
  }
  return unsized_.size();
}

void TraceStore::CheckTraceDir() {
  if (Status st = fs_.CheckTraceDir(); !st.ok()) log_.Warning("cannot check the trace directory: ", st.message());
  if (fs_.trace_dir_generation() != trace_dir_generation_) OnTraceDirReplaced();
}

void TraceStore::OnTraceDirReplaced() {
  trace_dir_generation_ = fs_.trace_dir_generation();
  // What was under the old directory went with it (renamed away, or deleted): it is no
  // longer ours to count or age. Open events keep their entries until they end.
  size_t left = 0;
  for (auto& map : classes_) {
    for (auto it = map.begin(); it != map.end();) {
      if (it->second.pins > 0) {
        ++it;
        continue;
      }
      by_path_.erase(it->second.rel_path);
      class_of_.erase(it->first);
      space_.SubUse(it->second.meta.cls, it->second.bytes.allocated);
      it = map.erase(it);
      ++left;
    }
  }
  log_.Warning("trace dir ", fs_.trace_dir(), " was deleted or renamed while running; re-created it. ", left,
               " event dir(s) left behind are no longer counted");
  if (Status st = RewriteLog(); !st.ok()) log_.Warning("cannot start the order log again: ", st.message());
}

}  // namespace atraced
