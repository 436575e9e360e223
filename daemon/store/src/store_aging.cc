// TraceStore, aging: the count limits, the byte budget and keep-free, max-age and VACUUM.
// The plans themselves are pure functions (aging.h, byte_budget.h); this file applies them to
// the store's lists: it logs the removals, takes the victims off the counts and hands them to
// the remover.
#include "atraced/store/trace_store.h"

#include <errno.h>

#include <algorithm>
#include <set>

#include "atraced/store/trace_time.h"

namespace atraced {

bool TraceStore::Kept(const Entry& e, int64_t now_us) const {
  return e.meta.dump != DumpKind::kNone && !e.meta.exported && dump_keep_us_ > 0 &&
         e.meta.created_us > now_us - dump_keep_us_;
}

uint64_t TraceStore::KeptDumps() const {
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now().time_since_epoch()).count();
  uint64_t n = 0;
  for (const ClassMap& map : classes_) {
    for (const auto& [seq, e] : map) n += Kept(e, now_us);
  }
  return n;
}

Result<size_t> TraceStore::MarkExported(std::span<const std::string> rel_paths,
                                        const std::function<bool(uint32_t uid)>& may_read) {
  std::string records;
  std::vector<Entry*> marked;
  for (const std::string& path : rel_paths) {
    auto found = by_path_.find(path);
    if (found == by_path_.end()) continue;  // aged since, or never ours
    Entry* e = FindEntry(found->second);
    if (e == nullptr || e->meta.dump == DumpKind::kNone || e->meta.exported || !may_read(e->meta.uid) ||
        std::find(marked.begin(), marked.end(), e) != marked.end()) {
      continue;
    }
    AppendExported(found->second, records);
    marked.push_back(e);
  }
  if (marked.empty()) return size_t{0};
  // Logged first: a release the log does not hold would be undone by a restart.
  if (Status st = AppendLog(records); !st.ok()) {
    return Status::Error(st.err(), "cannot record the export in the order log: " + st.message());
  }
  for (Entry* e : marked) e->meta.exported = true;
  counters_.dumps_exported += marked.size();
  // The count limits apply to them from now on: the classes dump-keep held over their limit.
  for (AgeClass c : {AgeClass::kHost, AgeClass::kDevice}) Enforce(c, false, nullptr);
  return marked.size();
}

std::vector<TraceStore::Victim> TraceStore::PlanVictims(AgeClass c, size_t extra) {
  ClassMap& map = classes_[static_cast<size_t>(c)];
  const size_t count = map.size() + extra;
  const size_t limit = LimitOf(c);
  std::vector<Victim> victims;
  if (count <= limit) return victims;
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now().time_since_epoch()).count();
  auto removable = [this, now_us](const Entry& e) { return e.pins == 0 && !Kept(e, now_us); };
  if (retention_.policy == AgingPolicy::kFifo) {  // the event path: no scan of the class
    for (auto it : PlanAging(map.begin(), map.end(), count, limit, [&](const auto& kv) { return removable(kv.second); })) {
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
    pool.push_back({it->second.bytes.allocated, it->second.meta.uid, removable(it->second)});
  }
  const size_t excess = count - limit;
  for (size_t i : PlanByPolicy(retention_.policy, pool, [excess](size_t n, uint64_t) { return n >= excess; })) {
    victims.push_back({c, refs[i]});
  }
  return victims;
}

std::vector<TraceStore::Victim> TraceStore::PlanBytes(std::span<const AgeClass> classes, uint64_t need,
                                                      uint64_t protect, uint64_t* freed,
                                                      const std::unordered_set<uint64_t>* skip) {
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
    const bool skipped = skip != nullptr && skip->count(v.it->first) != 0;
    // What aging it frees: not what passed descriptors keep (AddHeldBytes).
    pool.push_back({v.it->second.bytes.allocated - v.it->second.held, v.it->second.meta.uid,
                    v.it->second.pins == 0 && v.it->first != protect && !skipped});
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

void TraceStore::Retire(const std::vector<Victim>& victims, AgingReason reason, AgingReport* report) {
  const bool few = victims.size() <= kRemoveNowMaxDirs;
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now().time_since_epoch()).count();
  std::string aged_records;  // the dumps' 'a' records: the evidence `hang` names a lost rank by
  for (const Victim& v : victims) {
    const AgeClass c = v.cls;
    ClassMap& map = classes_[static_cast<size_t>(c)];
    auto it = v.it;
    Entry& e = it->second;
    const uint64_t seq = it->first;
    // A file a passed descriptor keeps open is not freed by the delete: its bytes stay its
    // holder's (SpaceAccount::Hold) until ReleaseHeld.
    const uint64_t bytes = e.bytes.allocated - e.held;
    space_.Unlist(e.held);
    space_.SubUse(c, e.held);
    RemovalJob job{seq, {}, e.meta.process_dir, !process_holds_.count(e.meta.process_dir), bytes};  // path: below
    ++counters_.dirs_aged;
    ++counters_.dirs_aged_by[static_cast<size_t>(reason)];
    counters_.bytes_freed_by[static_cast<size_t>(reason)] += bytes;
    counters_.bytes_freed += bytes;
    space_.Freed(bytes);
    space_.SubUse(c, bytes);
    // Debug, like "created": at the limit both happen on every event, and a line per event
    // is the log spam journald users complain of. The journal still gets a structured entry
    // (the sink), and STATUS counts them.
    // The path goes to the logger in pieces: nothing is built unless debug is on.
    log_.Debug("aged event dir ", fs_.trace_dir(), "/", e.rel_path, " (class=", AgeClassName(c), ", seq=", seq,
               ", reason=", AgingReasonName(reason), ")");
    if (e.meta.dump != DumpKind::kNone) {
      AgedDump aged{.aged_us = now_us, .reason = reason, .uid = e.meta.uid, .dump = e.meta.dump,
                    .exported = e.meta.exported, .process_dir = e.meta.process_dir, .event_dir = e.meta.event_dir,
                    .labels = e.meta.labels};
      AppendAged(aged, aged_records);
      if (aged_dumps_.size() == kMaxAgedDumps) aged_dumps_.pop_front();
      aged_dumps_.push_back(std::move(aged));
    }
    if (reason != AgingReason::kCount && reason != AgingReason::kVacuum && Kept(e, now_us)) {
      ++counters_.kept_dumps_aged;
      log_.Warning("aged dump dir ", fs_.trace_dir(), "/", e.rel_path, " before dump-keep ran out (reason=",
                   AgingReasonName(reason), "): the root is at its byte limits; export dumps sooner or raise max-use");
    }
    if (sink_) {
      sink_->OnStoreEvent({.kind = StoreEvent::Kind::kAged, .path = Abs(e.rel_path), .pid = e.pid, .uid = e.meta.uid,
                           .cls = AgeClassName(c), .seq = seq, .bytes = job.bytes, .labels = e.meta.labels,
                           .reason = AgingReasonName(reason), .dump = e.meta.dump, .exported = e.meta.exported});
    }
    if (report) report->removed.push_back(e.rel_path);
    // The directory leaves the visible tree now, so what `ls` counts when the caller replies
    // is what the store counts: deleted on the spot if small (RemoveNow), else moved aside for
    // the remover to delete there. A failed job comes back from the remover whole (kept in
    // failed_ for the retry), so pending_ keeps no copy.
    by_path_.erase(e.rel_path);
    class_of_.erase(seq);
    if (few && RemoveNow(e, job)) {
      map.erase(it);
      continue;
    }
    job.rel_path = MoveAside(std::move(e.rel_path), e.meta.event_dir);
    pending_.emplace(seq, Pending{std::move(e.meta), bytes, false});
    map.erase(it);
    remover_.Submit(std::move(job));
  }
  // After the '-' records: a crash between them loses the evidence, never a directory's fate.
  if (!aged_records.empty()) {
    if (Status st = AppendLog(aged_records); !st.ok()) {
      log_.Warning("cannot keep the evidence of aged dumps in the order log (kept until a restart): ", st.message());
    }
  }
}

bool TraceStore::RemoveNow(const Entry& e, const RemovalJob& job) {
  if (!e.sized || e.bytes.allocated > kRemoveNowMaxBytes) return false;
  auto removed = fs_.RemoveSmallDir(e.rel_path, kRemoveNowMaxFiles);
  if (!removed.ok() || !*removed) return false;
  // As the remover does after a delete (RemoveEventDir), and what its completion says.
  if (job.remove_parent_if_empty) (void)fs_.RemoveEmptyDir(job.process_dir);
  space_.DeletesDone();
  return true;
}

std::string TraceStore::MoveAside(std::string rel_path, const std::string& event_dir) {
  std::string aside(kAsideDirName);
  aside.append("/").append(FormatAsideName(aside_serial_++, event_dir));
  Status st = fs_.Rename(rel_path, aside);
  if (st.err() == ENOENT) {
    // The aside directory is made at recovery; someone removed it since (or the trace
    // directory was re-created). A source that is gone fails the same way again: nothing
    // is left to remove then, and the remover's delete of a missing path succeeds.
    if (Status made = fs_.MakeDir(std::string(kAsideDirName)); made.ok() || made.err() == EEXIST) {
      st = fs_.Rename(rel_path, aside);
    }
  }
  if (st.ok()) return aside;
  // The path no longer leads into our tree (the dir or its parent is gone, or was replaced
  // by a symlink or a file): nothing of ours is there, as the remover would find too.
  const int err = st.err();
  if (err != ENOENT && err != ELOOP && err != ENOTDIR && err != EXDEV) {
    // Deleted where it is, as before the aside directory: the count on disk stays one over
    // until the remover is done, and the name is not reused meanwhile.
    // Logged at the 1st, 2nd, 4th, 8th... failure: a cause that stays would fail every event.
    const uint64_t n = ++counters_.aside_failures;
    if ((n & (n - 1)) == 0) {
      log_.Warning("cannot move aged dir ", Abs(rel_path), " aside: ", st.message(), "; deleting it in place (", n,
                   " time(s) so far)");
    }
  }
  removing_paths_.insert(rel_path);
  return rel_path;
}

void TraceStore::CollectRemovals() {
  for (RemovalDone& d : remover_.TakeFinished()) {
    auto p = pending_.find(d.job.seq);
    if (d.status.ok()) {
      space_.DeletesDone();
      removing_paths_.erase(d.job.rel_path);
      if (p != pending_.end()) pending_.erase(p);
      if (d.job.seq == 0 && sweeps_outstanding_ > 0) --sweeps_outstanding_;
      continue;
    }
    // Still on disk and already logged as removed: retried on the next aging pass, and
    // finished at the next start-up whatever happens.
    ++counters_.removal_failures;
    space_.NotFreed(d.job.bytes);  // not freed after all
    log_.Warning("can not remove dir ", Abs(d.job.rel_path), ", errno=", d.status.err(), ": ", d.status.message());
    if (p != pending_.end()) p->second.failed = true;
    failed_.push_back(std::move(d.job));
  }
}

// Runs on every aging pass, so it touches only the failed jobs, never the whole of pending_
// (a scan of it per event was 5% of the event loop's time while the remover lagged).
void TraceStore::RetryFailed() {
  for (RemovalJob& job : failed_) {
    if (job.seq != 0) {  // 0: recovery's sweep of what an earlier run left, in no log
      auto p = pending_.find(job.seq);
      if (p == pending_.end()) continue;
      p->second.failed = false;
    }
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

Status TraceStore::RefuseHolder(uint32_t uid, uint64_t incoming, ByteNeed need) {
  ++counters_.refused_by_limit[static_cast<size_t>(need.limit)];
  const std::string why = "uid " + std::to_string(uid) + " holds " + std::to_string(space_.held_by(uid)) +
                          " bytes through descriptors passed to it and not closed, past " + ByteLimitName(need.limit) +
                          (incoming ? "; " + std::to_string(incoming) + " more bytes do not fit" : "; no new event fits") +
                          " until it closes them";
  // Not the root's refusal: a holder refused on every request must not turn the root's
  // "accepting again" line on and off.
  WarnRefusal(uid, why);
  return Status::Error(ENOSPC, why);
}

void TraceStore::WarnRefusal(uint32_t uid, const std::string& why) {
  uint64_t suppressed = 0;
  if (!refusals_.ShouldLog(uid, &suppressed)) return;
  log_.Warning("refusing writes (ENOSPC) under ", fs_.trace_dir(), " for uid ", uid, ": ", why, " (", suppressed,
               " more refusals for this uid since its last line)");
}

void TraceStore::SampleSpace() {
  CollectRemovals();
  auto space = fs_.Space();
  if (!space.ok()) {
    space_.SampleFailed(clock_.Now());
    log_.Warning("cannot read the free space of ", fs_.trace_dir(), ": ", space.status().message(),
                 "; keeping the last figure");
    return;
  }
  uint64_t still_freeing = 0;
  for (const auto& [seq, p] : pending_) {
    if (!p.failed) still_freeing += p.bytes;
  }
  space_.Sample(space->available, still_freeing, clock_.Now());
}

Status TraceStore::ResolveLimits() {
  auto space = fs_.Space();
  if (!space.ok()) return Status::Error(space.status().err(), "cannot size the byte limits: " + space.status().message());
  space_.Resolve(ResolveByteLimits(retention_, space->total), space->available, clock_.Now());
  return Status::Ok();
}

ByteNeed TraceStore::AgeForBytes(uint64_t incoming, uint64_t protect) {
  ByteNeed need = space_.NeedFor(incoming);
  if (need.bytes == 0) return need;
  // The estimate says a limit binds: ask the file system once for this pass (unless it was
  // asked a moment ago and nothing was deleted since), then age the oldest.
  if (space_.WantsSample(clock_.Now())) {
    SampleSpace();
    need = space_.NeedFor(incoming);
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
  log_.Info("aged ", n, " event dir(s) for ", ByteLimitName(need.limit), "; ", space_.UseLine());
  return space_.NeedFor(incoming);
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
  log_.Info("aged ", n, " event dir(s) older than max-age ", retention_.max_age.count(), "s; ", space_.UseLine());
}

Status TraceStore::MakeRoom(uint64_t seq, uint64_t incoming, std::optional<uint32_t> uid) {
  ByteNeed need = space_.NeedFor(incoming);
  if (need.bytes != 0) need = AgeForBytes(incoming, seq);
  // The uid it writes for: `seq`'s creator, else `uid`; looked up only off the fast path.
  if ((need.bytes != 0 || space_.anyone_holds()) && seq != 0) {
    if (const Entry* e = FindEntry(seq)) uid = e->meta.uid;
  }
  if (need.bytes == 0 && uid && space_.anyone_holds()) {
    if (ByteNeed own = space_.NeedForHolder(incoming, *uid); own.bytes != 0) return RefuseHolder(*uid, incoming, own);
  }
  if (need.bytes == 0) {
    if (refusing_) {
      refusing_ = false;
      log_.Notice("space is back within the limits: accepting writes again (", refused_while_full_,
                  " refused meanwhile); ", space_.UseLine());
      refused_while_full_ = 0;
    }
    return Status::Ok();
  }
  ++counters_.refused_by_limit[static_cast<size_t>(need.limit)];
  std::string why = need.limit == ByteLimit::kKeepFree
                        ? "keep-free: the file system has " + std::to_string(space_.free_bytes()) + " bytes free and " +
                              std::to_string(space_.limits().keep_free) + " are kept free"
                        : "max-use: the trace root holds " + std::to_string(space_.used()) + " of its " +
                              std::to_string(space_.limits().max_use) + "-byte budget";
  why += incoming ? "; " + std::to_string(incoming) + " more bytes do not fit" : "; no new event fits";
  why += " and nothing left is unpinned to age";
  // Every caller names the uid it writes for (or an event, whose creator it is); a refusal
  // for nobody in particular is the daemon's own, under uid 0.
  WarnRefusal(uid.value_or(0), why);
  refusing_ = true;
  ++refused_while_full_;
  return Status::Error(ENOSPC, why);
}

Status TraceStore::SetRetention(const RetentionSettings& settings) {
  if (!(settings == retention_)) {
    log_.Notice("retention: max-use ", settings.max_use ? "set" : "default", ", keep-free ",
                settings.keep_free ? "set" : "default", ", aging-policy ", AgingPolicyName(settings.policy),
                ", max-age ", settings.max_age.count() ? std::to_string(settings.max_age.count()) + "s" : "off");
  }
  retention_ = settings;
  if (!space_.resolved()) return Status::Ok();  // Recover resolves them
  if (Status st = ResolveLimits(); !st.ok()) return st;
  for (AgeClass c : kAllAgeClasses) Enforce(c, false, nullptr);
  AgeByTime();
  AgeForBytes(0, 0);
  return Status::Ok();
}

void TraceStore::Tick() {
  SampleSpace();
  RetryFailed();
  // Dumps dump-keep spared leave the count once it ran out: the classes they kept over it.
  for (AgeClass c : {AgeClass::kHost, AgeClass::kDevice}) {
    if (classes_[static_cast<size_t>(c)].size() > LimitOf(c)) Enforce(c, false, nullptr);
  }
  AgeByTime();
  AgeForBytes(0, 0);
  const uint64_t aged = counters_.dirs_aged_by[static_cast<size_t>(AgingReason::kCount)];
  if (aged != count_aged_reported_) {
    // At the count limit every event ages one directory: one line per tick, not per event.
    log_.Info("aged ", aged - count_aged_reported_, " event dir(s) for the count limit since the last report; ",
              space_.UseLine());
    count_aged_reported_ = aged;
  }
}

void TraceStore::SetRecordNum(uint32_t record_num) {
  if (record_num != record_num_) log_.Notice("record num changed from ", record_num_, " to ", record_num);
  record_num_ = record_num;
  Enforce(AgeClass::kHost, false, nullptr);
  Enforce(AgeClass::kDevice, false, nullptr);
}

void TraceStore::SetDumpKeep(std::chrono::seconds keep) {
  dump_keep_us_ = std::chrono::duration_cast<std::chrono::microseconds>(keep).count();
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

}  // namespace atraced
