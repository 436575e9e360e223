#include "atraced/core/trace_store.h"

#include <algorithm>
#include <set>

#include "atraced/core/trace_time.h"

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

TraceStore::TraceStore(FileSystem& fs, Remover& remover, Clock& clock, Logger& log, uint32_t record_num)
    : fs_(fs), remover_(remover), clock_(clock), log_(log), record_num_(record_num) {}

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

void TraceStore::Adopt(OrderEntry meta) {
  auto name = ParseEventDirName(meta.event_dir);
  Entry e;
  e.rel_path = meta.process_dir + "/" + meta.event_dir;
  e.kind = name ? name->kind : EventKind::kSchedule;
  e.pid = name ? name->pid : 0;
  auto process = ParseProcessDirName(meta.process_dir);
  e.pgid = process ? process->pgid : 0;
  // The byte budget needs every directory's size: measured after start (SizeRecovered), then
  // kept up to date as it is written.
  e.sized = false;
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
  used_ = {};
  used_total_ = 0;
  unsized_.clear();
  for (auto& m : classes_) m.clear();
  class_of_.clear();
  by_path_.clear();
  pending_.clear();
  failed_.clear();
  log_file_.reset();

  // The order log, if there is one; a tree from atraced 0.1 has markers instead.
  std::optional<OrderLogReplay> replay;
  auto text = fs_.ReadFile(std::string(kOrderLogName), kMaxOrderLogBytes);
  if (text.ok()) {
    replay = ReplayOrderLog(*text);
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
  auto top = fs_.ListDir("");
  if (!top.ok()) return top.status();
  for (const DirEntry& pd : *top) {
    if (pd.type != DirEntry::Type::kDirectory || !ParseProcessDirName(pd.name)) continue;
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
  size_t dropped = 0;
  if (replay) {
    std::set<std::string> live_paths;
    for (OrderEntry& e : replay->live) {
      std::string rel = e.process_dir + "/" + e.event_dir;
      if (!present.count(rel)) {
        ++dropped;  // never made (a crash after its record), or removed by someone else
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
                      d.process_dir, d.event_dir});
    }
    if (!legacy.empty() || !sweeps.empty()) {
      log_.Notice("recovery: no order log; adopted ", live.size(), " event dirs of atraced 0.1 by their markers and ",
                  "removing ", sweeps.size(), " half-made ones");
    }
  }
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

  // The compacted log goes down before any removal starts, so a crash now still finishes them.
  if (Status st = RewriteLog(); !st.ok()) return Status::Error(st.err(), "cannot write the order log: " + st.message());
  for (RemovalJob& j : resumed) remover_.Submit(std::move(j));
  for (RemovalJob& j : sweeps) remover_.Submit(j);

  log_.Info("recovered ", count(AgeClass::kHost), " host, ", count(AgeClass::kDevice), " device and ",
            count(AgeClass::kExit), " exit event dirs under ", fs_.trace_dir(), " (", unmanaged,
            " not managed by atraced, ", finishing.size() + sweeps.size(), " interrupted removals resumed, ", dropped,
            " logged dirs gone); record num ", record_num_, ", exit record num ", exit_record_num_, "; ", UseLine());
  for (AgeClass c : kAllAgeClasses) Enforce(c, false, nullptr);
  AgeByTime();
  AgeForBytes(0, 0);
  return Status::Ok();
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
  for (const auto& [seq, rec] : all) {
    AppendCreated(*rec.first, text);
    if (rec.second) AppendRemoved(seq, text);
  }
  log_file_.reset();
  if (Status st = fs_.ReplaceFile(std::string(kOrderLogName), Bytes(text)); !st.ok()) return st;
  log_records_ = all.size() + pending_.size();
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

std::vector<TraceStore::Victim> TraceStore::PlanVictims(AgeClass c, size_t extra) {
  ClassMap& map = classes_[static_cast<size_t>(c)];
  const size_t count = map.size() + extra;
  const size_t limit = LimitOf(c);
  std::vector<Victim> victims;
  if (count <= limit) return victims;
  if (retention_.policy == AgingPolicy::kFifo) {  // the event path: no scan of the class
    for (auto it : PlanAging(map.begin(), map.end(), count, limit, [](const auto& kv) { return kv.second.pins == 0; })) {
      victims.push_back({c, it});
    }
    return victims;
  }
  std::vector<ClassMap::iterator> refs;
  std::vector<AgingCandidate> pool;
  refs.reserve(map.size());
  pool.reserve(map.size());
  for (auto it = map.begin(); it != map.end(); ++it) {
    refs.push_back(it);
    pool.push_back({it->second.bytes.allocated, it->second.pgid, it->second.pins == 0});
  }
  const size_t excess = count - limit;
  for (size_t i : PlanByPolicy(retention_.policy, pool, [excess](size_t n, uint64_t) { return n >= excess; })) {
    victims.push_back({c, refs[i]});
  }
  return victims;
}

std::vector<TraceStore::Victim> TraceStore::PlanBytes(std::span<const AgeClass> classes, uint64_t need,
                                                      uint64_t protect, uint64_t* freed) {
  // The classes merged in creation order: the oldest directory of the pool goes first.
  std::vector<Victim> refs;
  for (AgeClass c : classes) {
    ClassMap& map = classes_[static_cast<size_t>(c)];
    for (auto it = map.begin(); it != map.end(); ++it) refs.push_back({c, it});
  }
  if (classes.size() > 1) {
    std::sort(refs.begin(), refs.end(), [](const Victim& a, const Victim& b) { return a.it->first < b.it->first; });
  }
  std::vector<AgingCandidate> pool;
  pool.reserve(refs.size());
  for (const Victim& v : refs) {
    EnsureSized(v.it->second);  // a recovered dir not sized yet: its bytes decide the plan
    pool.push_back({v.it->second.bytes.allocated, v.it->second.pgid, v.it->second.pins == 0 && v.it->first != protect});
  }
  std::vector<Victim> victims;
  *freed = 0;
  for (size_t i : PlanByPolicy(retention_.policy, pool, [need](size_t, uint64_t bytes) { return bytes >= need; })) {
    victims.push_back(refs[i]);
    *freed += pool[i].bytes;
  }
  return victims;
}

bool TraceStore::LogRemovals(const std::vector<Victim>& victims, const char* what) {
  if (victims.empty()) return true;
  std::string records;
  for (const Victim& v : victims) AppendRemoved(v.it->first, records);
  if (Status st = AppendLog(records); !st.ok()) {
    log_.Warning("cannot age ", what, " now: the order log cannot be written: ", st.message());
    return false;
  }
  return true;
}

void TraceStore::EnsureSized(Entry& e) {
  if (e.sized) return;
  e.sized = true;
  auto bytes = fs_.TreeBytes(e.rel_path);
  e.bytes = bytes.ok() ? *bytes : DiskUsage{};
  AddUse(e.meta.cls, e.bytes.allocated);
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
    log_.Info("sized the recovered event dirs; ", UseLine());
    AgeForBytes(0, 0);
  }
  return unsized_.size();
}

void TraceStore::AddUse(AgeClass c, uint64_t bytes) {
  used_[static_cast<size_t>(c)] += bytes;
  used_total_ += bytes;
}

void TraceStore::SubUse(AgeClass c, uint64_t bytes) {
  uint64_t& u = used_[static_cast<size_t>(c)];
  u -= std::min(u, bytes);
  used_total_ -= std::min(used_total_, bytes);
}

void TraceStore::Retire(const std::vector<Victim>& victims, AgingReason reason, AgingReport* report) {
  for (const Victim& v : victims) {
    const AgeClass c = v.cls;
    ClassMap& map = classes_[static_cast<size_t>(c)];
    auto it = v.it;
    Entry& e = it->second;
    const uint64_t seq = it->first;
    const uint64_t bytes = e.bytes.allocated;
    RemovalJob job{seq, {}, e.meta.process_dir, !process_holds_.count(e.meta.process_dir), bytes};  // path: below
    ++counters_.dirs_aged;
    ++counters_.dirs_aged_by[static_cast<size_t>(reason)];
    counters_.bytes_freed_by[static_cast<size_t>(reason)] += bytes;
    counters_.bytes_freed += bytes;
    freed_since_sample_ += bytes;
    SubUse(c, bytes);
    // Debug, like "created": at the limit both happen on every event, and a line per event
    // is the log spam journald users complain of. The journal still gets a structured entry
    // (the sink), and STATUS counts them.
    // The path goes to the logger in pieces: nothing is built unless debug is on.
    log_.Debug("aged event dir ", fs_.trace_dir(), "/", e.rel_path, " (class=", AgeClassName(c), ", seq=", seq,
               ", reason=", AgingReasonName(reason), ")");
    if (sink_) sink_->OnStoreEvent({StoreEvent::Kind::kAged, Abs(e.rel_path), e.pid, e.meta.uid, AgeClassName(c), seq, job.bytes});
    if (report) report->removed.push_back(e.rel_path);
    // Aging runs on every event at the limit: the path's key moves from by_path_ to
    // removing_paths_ and the entry's own path into the job, rather than being copied. A
    // failed job comes back from the remover whole (kept in failed_ for the retry), so
    // pending_ keeps no copy of it.
    if (auto node = by_path_.extract(e.rel_path)) {
      removing_paths_.insert(std::move(node.key()));
    } else {
      removing_paths_.insert(e.rel_path);
    }
    class_of_.erase(seq);
    job.rel_path = std::move(e.rel_path);
    pending_.emplace(seq, Pending{std::move(e.meta), bytes, false});
    map.erase(it);
    remover_.Submit(std::move(job));
  }
}

void TraceStore::CollectRemovals() {
  for (RemovalDone& d : remover_.TakeFinished()) {
    auto p = pending_.find(d.job.seq);
    if (d.status.ok()) {
      deletes_done_since_sample_ = true;
      removing_paths_.erase(d.job.rel_path);
      if (p != pending_.end()) pending_.erase(p);
      continue;
    }
    // Still on disk and already logged as removed: retried on the next aging pass, and
    // finished at the next start-up whatever happens.
    ++counters_.removal_failures;
    freed_since_sample_ -= std::min(freed_since_sample_, d.job.bytes);  // not freed after all
    log_.Warning("can not remove dir ", Abs(d.job.rel_path), ", errno=", d.status.err(), ": ", d.status.message());
    if (p != pending_.end()) p->second.failed = true;
    failed_.push_back(std::move(d.job));
  }
}

// Runs on every aging pass, so it touches only the failed jobs, never the whole of pending_
// (a scan of it per event was 5% of the event loop's time while the remover lagged).
void TraceStore::RetryFailed() {
  for (RemovalJob& job : failed_) {
    auto p = pending_.find(job.seq);
    if (p == pending_.end()) continue;
    p->second.failed = false;
    remover_.Submit(std::move(job));
  }
  failed_.clear();
}

void TraceStore::Enforce(AgeClass c, bool dry_run, AgingReport* report) {
  if (!dry_run) {
    CollectRemovals();
    RetryFailed();
  }
  auto victims = PlanVictims(c, 0);
  if (victims.empty()) return;  // within the limit, or all left is pinned: enforced on release
  if (dry_run) {
    if (report) {
      for (const Victim& v : victims) report->removed.push_back(v.it->second.rel_path);
    }
    return;
  }
  if (!LogRemovals(victims, (std::string(AgeClassName(c)) + " dirs").c_str())) return;
  Retire(victims, report ? AgingReason::kVacuum : AgingReason::kCount, report);
}

uint64_t TraceStore::free_bytes() const {
  const uint64_t up = free_sample_ + freed_since_sample_;
  return up > written_since_sample_ ? up - written_since_sample_ : 0;
}

ByteNeed TraceStore::NeedFor(uint64_t incoming) const {
  if (!limits_resolved_) return {};  // before Recover: nothing is counted yet
  return BytesToFree(used_total_, incoming, limits_.max_use, free_bytes(), limits_.keep_free);
}

void TraceStore::SampleSpace() {
  CollectRemovals();
  auto space = fs_.Space();
  sampled_at_ = clock_.Now();
  deletes_done_since_sample_ = false;
  if (!space.ok()) {
    log_.Warning("cannot read the free space of ", fs_.trace_dir(), ": ", space.status().message(),
                 "; keeping the last figure");
    return;
  }
  free_sample_ = space->available;
  written_since_sample_ = 0;
  // Deletes still running are not in the figure yet; they will be in a moment.
  freed_since_sample_ = 0;
  for (const auto& [seq, p] : pending_) {
    if (!p.failed) freed_since_sample_ += p.bytes;
  }
}

Status TraceStore::ResolveLimits() {
  auto space = fs_.Space();
  if (!space.ok()) return Status::Error(space.status().err(), "cannot size the byte limits: " + space.status().message());
  limits_ = ResolveByteLimits(retention_, space->total);
  limits_resolved_ = true;
  free_sample_ = space->available;
  written_since_sample_ = 0;
  freed_since_sample_ = 0;
  sampled_at_ = clock_.Now();
  return Status::Ok();
}

std::string TraceStore::UseLine() const {
  return "use " + std::to_string(used_total_) + " of budget " + std::to_string(limits_.max_use) + " bytes, " +
         std::to_string(free_bytes()) + " free (keep-free " + std::to_string(limits_.keep_free) + ")";
}

ByteNeed TraceStore::AgeForBytes(uint64_t incoming, uint64_t protect) {
  ByteNeed need = NeedFor(incoming);
  if (need.bytes == 0) return need;
  // The estimate says a limit binds: ask the file system once for this pass (unless it was
  // asked a moment ago and nothing was deleted since), then age the oldest.
  const auto now = clock_.Now();
  if (deletes_done_since_sample_ || now - sampled_at_ >= kResampleInterval) {
    SampleSpace();
    need = NeedFor(incoming);
    if (need.bytes == 0) return need;
  }
  const AgingReason reason = need.limit == ByteLimit::kKeepFree ? AgingReason::kKeepFree : AgingReason::kMaxUse;
  // Exit directories go last: host and device first, merged in creation order.
  static constexpr AgeClass kEvents[] = {AgeClass::kHost, AgeClass::kDevice};
  static constexpr AgeClass kExits[] = {AgeClass::kExit};
  uint64_t freed = 0;
  auto victims = PlanBytes(kEvents, need.bytes, protect, &freed);
  if (freed < need.bytes) {
    uint64_t more = 0;
    auto exits = PlanBytes(kExits, need.bytes - freed, protect, &more);
    victims.insert(victims.end(), exits.begin(), exits.end());
  }
  if (victims.empty() || !LogRemovals(victims, (std::string("dirs for ") + ByteLimitName(need.limit)).c_str())) {
    return need;
  }
  const size_t n = victims.size();
  Retire(victims, reason, nullptr);
  log_.Info("aged ", n, " event dir(s) for ", ByteLimitName(need.limit), "; ", UseLine());
  return NeedFor(incoming);
}

void TraceStore::AgeByTime() {
  if (retention_.max_age.count() <= 0) return;
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now().time_since_epoch()).count();
  const int64_t cutoff = now_us - std::chrono::duration_cast<std::chrono::microseconds>(retention_.max_age).count();
  std::vector<Victim> victims;
  for (AgeClass c : kAllAgeClasses) {
    ClassMap& map = classes_[static_cast<size_t>(c)];
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (it->second.pins == 0 && it->second.meta.created_us < cutoff) victims.push_back({c, it});
    }
  }
  if (victims.empty() || !LogRemovals(victims, "dirs for max-age")) return;
  const size_t n = victims.size();
  Retire(victims, AgingReason::kAge, nullptr);
  log_.Info("aged ", n, " event dir(s) older than max-age ", retention_.max_age.count(), "s; ", UseLine());
}

Status TraceStore::MakeRoom(uint64_t seq, uint64_t incoming) {
  ByteNeed need = NeedFor(incoming);
  if (need.bytes != 0) need = AgeForBytes(incoming, seq);
  if (need.bytes == 0) {
    if (refusing_) {
      refusing_ = false;
      log_.Notice("space is back within the limits: accepting writes again (", refusals_unlogged_,
                  " more refused since the last report); ", UseLine());
      refusals_unlogged_ = 0;
    }
    return Status::Ok();
  }
  ++counters_.refused_by_limit[static_cast<size_t>(need.limit)];
  std::string why = need.limit == ByteLimit::kKeepFree
                        ? "keep-free: the file system has " + std::to_string(free_bytes()) + " bytes free and " +
                              std::to_string(limits_.keep_free) + " are kept free"
                        : "max-use: the trace root holds " + std::to_string(used_total_) + " of its " +
                              std::to_string(limits_.max_use) + "-byte budget";
  why += incoming ? "; " + std::to_string(incoming) + " more bytes do not fit" : "; no new event fits";
  why += " and nothing left is unpinned to age";
  const auto now = clock_.Now();
  if (!refusing_ || now - refusal_logged_at_ >= kRefusalLogInterval) {
    log_.Warning("refusing writes (ENOSPC) under ", fs_.trace_dir(), ": ", why, " (", refusals_unlogged_,
                 " more refused since the last report)");
    refusal_logged_at_ = now;
    refusals_unlogged_ = 0;
  } else {
    ++refusals_unlogged_;
  }
  refusing_ = true;
  return Status::Error(ENOSPC, why);
}

Status TraceStore::SetRetention(const RetentionSettings& settings) {
  if (!(settings == retention_)) {
    log_.Notice("retention: max-use ", settings.max_use ? "set" : "default", ", keep-free ",
                settings.keep_free ? "set" : "default", ", aging-policy ", AgingPolicyName(settings.policy),
                ", max-age ", settings.max_age.count() ? std::to_string(settings.max_age.count()) + "s" : "off");
  }
  retention_ = settings;
  if (!limits_resolved_) return Status::Ok();  // Recover resolves them
  if (Status st = ResolveLimits(); !st.ok()) return st;
  for (AgeClass c : kAllAgeClasses) Enforce(c, false, nullptr);
  AgeByTime();
  AgeForBytes(0, 0);
  return Status::Ok();
}

void TraceStore::Tick() {
  SampleSpace();
  RetryFailed();
  AgeByTime();
  AgeForBytes(0, 0);
  const uint64_t aged = counters_.dirs_aged_by[static_cast<size_t>(AgingReason::kCount)];
  if (aged != count_aged_reported_) {
    // At the count limit every event ages one directory: one line per tick, not per event.
    log_.Info("aged ", aged - count_aged_reported_, " event dir(s) for the count limit since the last report; ",
              UseLine());
    count_aged_reported_ = aged;
  }
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
      SubUse(it->second.meta.cls, it->second.bytes.allocated);
      it = map.erase(it);
      ++left;
    }
  }
  log_.Warning("trace dir ", fs_.trace_dir(), " was deleted or renamed while running; re-created it. ", left,
               " event dir(s) left behind are no longer counted");
  if (Status st = RewriteLog(); !st.ok()) log_.Warning("cannot start the order log again: ", st.message());
}

Result<BeginResult> TraceStore::BeginEvent(const EventSpec& spec) {
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
  std::string event = FormatEventDirName({spec.kind, spec.pid, spec.time.empty() ? FormatTraceTime(now) : spec.time});
  std::string rel;
  rel.reserve(proc.size() + 1 + event.size());  // one allocation, not operator+'s two
  rel.append(proc).append("/").append(event);

  if (auto found = by_path_.find(rel); found != by_path_.end()) {
    // Same path again (CANN: all objects of one report share a directory): same directory,
    // counted once, keeping its place in the aging order.
    ++FindEntry(found->second)->pins;
    return BeginResult{found->second, rel, false};
  }
  if (removing_paths_.count(rel)) return Status::Error(EBUSY, Abs(rel) + " is being removed by aging");
  if (Status st = MakeRoom(0, 0); !st.ok()) return st;

  const AgeClass c = ClassOf(spec.kind, spec.side);
  const uint64_t seq = next_seq_++;
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  OrderEntry meta{seq, c, spec.device_id, spec.uid, now_us, proc, std::move(event)};
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
  Entry e{std::move(meta), rel, spec.kind, spec.pid, 1, DiskUsage{}, spec.process.pgid};
  classes_[static_cast<size_t>(c)].emplace(seq, std::move(e));
  ++counters_.events_created;
  log_.Debug("created event dir ", fs_.trace_dir(), "/", rel, " (class=", AgeClassName(c), ", seq=", seq, ", uid=", spec.uid, ")");
  if (sink_) sink_->OnStoreEvent({StoreEvent::Kind::kCreated, Abs(rel), spec.pid, spec.uid, AgeClassName(c), seq, 0});
  Retire(victims, AgingReason::kCount, nullptr);  // the new directory was not among them: it was not listed yet
  // The mkdir may have found the trace directory deleted and re-created it: the new entry is
  // pinned, so it is kept and goes into the new order log.
  if (fs_.trace_dir_generation() != trace_dir_generation_) OnTraceDirReplaced();
  return BeginResult{seq, std::move(rel), true};
}

void TraceStore::EndEvent(uint64_t seq) {
  Entry* e = FindEntry(seq);
  if (e == nullptr || e->pins == 0) return;
  if (--e->pins == 0) Enforce(e->meta.cls, false, nullptr);
}

Result<std::unique_ptr<WritableFile>> TraceStore::OpenFile(uint64_t seq, const TraceFileName& name) {
  Entry* e = FindEntry(seq);
  if (e == nullptr) return Status::Error(ENOENT, "no event with sequence " + std::to_string(seq));
  // The path is built in a buffer kept between calls: one file is opened per event.
  std::string& path = path_scratch_;
  path.assign(e->rel_path).append("/").append(name.str());
  return fs_.OpenAppend(path);
}

void TraceStore::AddBytes(uint64_t seq, DiskUsage grown) {
  counters_.bytes_written += grown.allocated;
  counters_.bytes_apparent += grown.apparent;
  written_since_sample_ += grown.allocated;
  Entry* e = FindEntry(seq);
  if (e == nullptr) return;
  EnsureSized(*e);  // measured before the growth is added, so nothing counts twice
  e->bytes += grown;
  AddUse(e->meta.cls, grown.allocated);
  // Daemon writes asked MakeRoom first; bytes written through a passed descriptor did not.
  if (NeedFor(0).bytes != 0) AgeForBytes(0, seq);
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
  Enforce(AgeClass::kHost, false, nullptr);
  Enforce(AgeClass::kDevice, false, nullptr);
}

void TraceStore::SetExitRecordNum(uint32_t exit_record_num) {
  if (exit_record_num != exit_record_num_) {
    log_.Notice("exit record num changed from ", exit_record_num_, " to ", exit_record_num);
  }
  exit_record_num_ = exit_record_num;
  Enforce(AgeClass::kExit, false, nullptr);
}

AgingReport TraceStore::Vacuum(bool dry_run) {
  AgingReport report;
  for (AgeClass c : kAllAgeClasses) Enforce(c, dry_run, &report);
  if (!dry_run) {
    AgeByTime();
    AgeForBytes(0, 0);
  }
  return report;
}

EventInfo TraceStore::InfoOf(uint64_t seq, Entry& e) {
  EnsureSized(e);
  const Side side = e.meta.cls == AgeClass::kDevice ? Side::kDevice : Side::kHost;
  return EventInfo{seq,        e.rel_path,        e.kind,            side,              e.meta.device_id, e.pid,
                   e.meta.uid, e.meta.created_us, e.bytes.allocated, e.bytes.apparent, e.pins};
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
