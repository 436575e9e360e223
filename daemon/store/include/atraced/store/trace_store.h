// The trace store: names, creates, pins and ages the event directories of one trace root.
//
// Threading: a TraceStore has a single owner and no locks; in the daemon that is the event
// loop's thread. The only work done elsewhere is the recursive delete of aged directories,
// handed to a Remover (remover.h) after the decision is made and logged.
//
// Ordering and crash safety: the order log (order_log.h) records each directory before it
// is made and each removal before it starts. Recovery reads it back, keeps the directories
// that exist, finishes interrupted removals, renumbers and rewrites it. Nothing depends on
// mtime or on the names' clock, so a clock that jumps backwards cannot reorder anything, and
// directories that are not in the log (an in-process CANN recorder sharing the root) are
// never counted or removed.
//
// Cost of an event at the limit, on the caller's path: one append to the order log (the new
// directory and the removals it causes, together), one mkdir, one rename of the aged
// directory into the aside directory (names.h), then the files. The delete of the aged
// directory runs on the remover, so when the caller replies the tree holds exactly the
// directories the store counts.
//
// Byte limits (retention.h): the bytes of every directory are known (measured once at
// recovery, then added as they are written) and summed in a SpaceAccount
// (space_account.h), which says in O(1) how many bytes a write needs freed. A fresh
// fstatvfs is taken on the daemon's tick and when the account says a limit binds (at most
// once per aging pass), never per append. An aging pass for bytes costs the directories of
// the pool it plans over (host and device merged, then exit).
// `max-age` is checked on the tick: one scan of the entries.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "atraced/store/aging.h"
#include "atraced/common/clock.h"
#include "atraced/store/file_system.h"
#include "atraced/common/log.h"
#include "atraced/common/refusal_log.h"
#include "atraced/store/names.h"
#include "atraced/store/order_log.h"
#include "atraced/store/remover.h"
#include "atraced/store/retention.h"
#include "atraced/store/space_account.h"
#include "atraced/base/status.h"
#include "atraced/store/store_events.h"

namespace atraced {

struct EventSpec {
  ProcessDirName process;  // trace_{pgid}_{pid}_{time} the event belongs to
  EventKind kind = EventKind::kSchedule;
  int32_t pid = 0;   // {event}_event_{pid}_{time}
  std::string time;  // "" = now by the store's clock; else 20 digits (a device's own time)
  Side side = Side::kHost;
  uint32_t device_id = 0;
  uint32_t uid = 0;  // of the client, for listing
  std::string comm;  // the program it is made for (the order log keeps it, for listing); "" unknown
  // A save the daemon writes into the directory in one go (a ring save, a report): logged
  // as begun ('p', order_log.h) until EndSave logs it complete. A directory a save makes is
  // the daemon's ('s'): a client's event of the same path is refused (EEXIST). A save into
  // a client's directory of the same path leaves it the client's.
  bool save = false;
  proto::Labels labels{};  // its process's job, rank and world size (order log, listing, journal)
  DumpKind dump = DumpKind::kNone;  // PROCESS_DUMP's directory: an operator's or the hang watch's
};

struct BeginResult {
  uint64_t seq = 0;
  std::string rel_path;  // relative to the trace directory
  bool created = false;  // false: the directory existed and was reused (counted once)
};

struct EventInfo {
  uint64_t seq = 0;
  std::string rel_path;
  EventKind kind = EventKind::kSchedule;
  Side side = Side::kHost;
  uint32_t device_id = 0;
  int32_t pid = 0;
  uint32_t uid = 0;
  int64_t created_us = 0;
  uint64_t bytes = 0;           // allocated: what the directory takes from the disk
  uint64_t apparent_bytes = 0;  // the files' lengths, holes included
  uint32_t pins = 0;
  std::string comm;  // "" unknown (a directory from before the order log kept it)
  // A save into it was cut short (a crash, a kill, a stop) or failed to write: its files
  // may be empty or short. False while a save is still being written into it.
  bool incomplete = false;
  proto::Labels labels{};  // none known: all ""
  DumpKind dump = DumpKind::kNone;
  bool saved = false;  // the daemon made it for a save: no client wrote in it (order_log.h's 's')
};

struct StoreCounters {
  uint64_t events_created = 0;
  uint64_t dirs_aged = 0;          // taken off the lists by aging (their delete may still run)
  std::array<uint64_t, kAgingReasonCount> dirs_aged_by{};    // the same, by reason
  std::array<uint64_t, kAgingReasonCount> bytes_freed_by{};  // their bytes, by reason
  uint64_t removal_failures = 0;   // deletes that failed (each is retried)
  uint64_t aside_failures = 0;     // aged dirs that could not be moved aside (deleted in place)
  uint64_t events_discarded = 0;   // events that ended with no file: their dirs taken back
  uint64_t bytes_written = 0;   // allocated (see DiskUsage): what the budget protects
  uint64_t bytes_apparent = 0;  // the same growth measured by file length
  uint64_t bytes_freed = 0;     // the (allocated) bytes of aged directories
  // Writes and new events refused with ENOSPC, indexed by ByteLimit (max-use, keep-free).
  std::array<uint64_t, 3> refused_by_limit{};
  // Dumps (EventInfo::dump) aged by the byte budget or keep-free while dump-keep still spared
  // them from the count: each is logged, and STATUS shows the count.
  uint64_t kept_dumps_aged = 0;
  uint64_t dumps_exported = 0;  // dumps released from dump-keep by an export (MarkExported)
};

// What an aging pass took off the lists (relative paths), for VACUUM's reply.
struct AgingReport {
  std::vector<std::string> removed;
  std::vector<uint32_t> removed_uids;  // VacuumBy's dry run: whose each of `removed` is
  uint64_t bytes = 0;  // VacuumBy: their allocated bytes
};

// VACUUM_BY: journalctl's vacuum verbs, applied once, each as the limit it mirrors (a
// directory goes if any verb given says so; pinned ones never):
//  - older_than: every class, exit included, made longer ago than that (as max-age);
//  - max_use: the oldest until the root holds at most that many bytes, host and device
//    merged in creation order first, exit last (as the byte budget);
//  - keep: host and device each down to that many, the oldest first (as record-num); exit
//    directories are not in that count (CANN never ages them by count; exit-record-num does).
// The aging policy (fifo, fair) chooses among candidates as it does for the limits.
struct VacuumSpec {
  std::optional<std::chrono::microseconds> older_than;
  std::optional<uint64_t> max_use;
  std::optional<uint32_t> keep;
  bool dry_run = false;
};

class TraceStore {
 public:
  // `refusals`: the daemon's one refusal throttle (refusal_log.h), which the service asks too,
  // so that a uid's flood of refusals on any mix of paths is one line per interval.
  TraceStore(FileSystem& fs, Remover& remover, Clock& clock, Logger& log, RefusalLog& refusals, uint32_t record_num);

  // Rebuilds the lists from the order log and the tree, finishes interrupted removals,
  // rewrites the log and applies the limit. Call once before anything else. Recovered
  // directories are not sized here (a walk of every one would triple the time to ready):
  // see SizeRecovered.
  // Each recovered process directory is made readable by the uid the order log has for it,
  // root and the reader group, nobody else (FileSystem::RepairGrant); under an order log
  // that vouches for the grants (its 'g' record) only those whose metadata changed since are
  // read (FileSystem::RecheckGrant).
  Status Recover();
  // Sizes up to `max` recovered directories for the byte budget and returns how many are
  // left; once none is, the byte limits are applied. The daemon runs it in slices from its
  // event loop after the socket accepts. Until a directory is sized it counts 0 bytes
  // (journald's space cache is also filled after start); LIST, EVENT_END and aging for
  // bytes size the ones they touch first.
  size_t SizeRecovered(size_t max);

  // Creates the event directory (or finds the existing one with the same path) and pins it.
  // Then ages its class with the new directory protected.
  // `utc_offset_s`: "now" for an empty spec.time in the creator's local time (CANN names a
  // process's directories in its own), else in the daemon's.
  Result<BeginResult> BeginEvent(const EventSpec& spec, std::optional<int32_t> utc_offset_s = std::nullopt);
  // Releases one pin; an unpinned class over its limit is aged at once.
  void EndEvent(uint64_t seq);
  // The save begun with EventSpec::save ends (before its EndEvent): once the last save into
  // the directory ended and every one was `complete`, its completion goes to the order log
  // ('d'); else the directory stays incomplete, across restarts too.
  void EndSave(uint64_t seq, bool complete);
  // Directories marked incomplete (EventInfo::incomplete), for STATUS.
  uint64_t IncompleteDirs() const;

  // Before the daemon writes `incoming` bytes into event `seq` (0: before a new event is
  // made): ages what the byte limits ask for, never a pinned directory or `seq`; if that is
  // not enough, refuses with ENOSPC and a message naming the limit (counted, and logged
  // through the refusal throttle for the uid it writes for). Then, for the uid it writes for (`seq`'s creator,
  // else `uid`), counts what that uid holds through passed descriptors (AddHeldBytes): a
  // holder kept over a limit by its own held bytes is refused, and nothing is aged for it.
  // O(1) while the limits are met.
  Status MakeRoom(uint64_t seq, uint64_t incoming, std::optional<uint32_t> uid = std::nullopt);

  // Opens (creating if needed) a file in a pinned event.
  Result<std::unique_ptr<WritableFile>> OpenFile(uint64_t seq, const TraceFileName& name);
  // Accounts growth the daemon wrote into an event's files (it asked MakeRoom first).
  void AddBytes(uint64_t seq, DiskUsage grown);
  // Growth of a file whose descriptor was passed to a client of `uid` (file_accounting.h):
  // counted (STATUS, LIST, the directory's bytes) and charged to `uid` for as long as some
  // descriptor keeps it open, but outside every other uid's limits: aging cannot free what
  // a descriptor holds, and the bytes asked no limit first. So nothing is aged for them, and
  // only `uid`'s own requests are refused while they keep it over a limit (MakeRoom). Kept
  // after `seq` is aged, until ReleaseHeld.
  void AddHeldBytes(uint64_t seq, uint32_t uid, DiskUsage grown);
  // The last writer of such a file closed it: `allocated` of `uid`'s held bytes in `seq`
  // count as any other from now on (an aged directory's are freed as its watch closes). If
  // they keep the root over a limit, `seq` itself is aged first (unless pinned): the bytes
  // that asked no limit go before anyone else's.
  void ReleaseHeld(uint64_t seq, uint32_t uid, uint64_t allocated);
  // Bytes the daemon itself wrote: both figures are the count written.
  void AddBytes(uint64_t seq, uint64_t written) { AddBytes(seq, DiskUsage{written, written}); }
  // Bytes a job on the I/O workers may still write (docs/IO_WORKERS.md): MakeRoom and the
  // byte limits count them as written, so the budget holds while they are in flight. The
  // job's completion unreserves them and adds what was written (AddBytes).
  void Reserve(uint64_t bytes) { space_.Reserve(bytes); }
  void Unreserve(uint64_t bytes) { space_.Unreserve(bytes); }
  // Removes a file the daemon made in event `seq` and left empty (a ring whose records all
  // turned out torn: CANN writes no file then).
  Status RemoveFile(uint64_t seq, const TraceFileName& name);
  // A process directory held by a live client is not removed when aging empties it.
  void HoldProcessDir(const std::string& name);
  void ReleaseProcessDir(const std::string& name);

  // Applies a new record number at once.
  void SetRecordNum(uint32_t record_num);
  // dump-keep: a dump's directory (EventSpec::dump) is spared by the count limits for this
  // long after it was made (0: never), so that a job's dumps wait for their export. The byte
  // limits still count and may age it (with a log line, StoreCounters::kept_dumps_aged).
  void SetDumpKeep(std::chrono::seconds keep);
  // `atracectl export` wrote a bundle holding the dumps at `rel_paths` (DUMPS_EXPORTED): dump-keep
  // spares them no more, across restarts (the order log's 'x'), and the count limits apply to
  // them at once. A path that names no dump of the store (aged since, not a dump, released
  // already) or one whose uid `may_read` refuses is skipped. Returns how many were released;
  // fails, releasing nothing, if the order log cannot be written.
  Result<size_t> MarkExported(std::span<const std::string> rel_paths, const std::function<bool(uint32_t uid)>& may_read);
  // Dumps dump-keep spares from the count limits now (not exported, younger than dump-keep),
  // for STATUS: one pass over the entries.
  uint64_t KeptDumps() const;
  // Applies a new bound on exit directories at once (default kExitRecordNumDefault).
  void SetExitRecordNum(uint32_t exit_record_num);
  // Applies new retention settings (byte budget, keep-free, policy, max age) at once. Sizes
  // in % are resolved against the file system now; fails only if it cannot be asked.
  Status SetRetention(const RetentionSettings& settings);
  // Applies the limits now, retrying failed deletes; dry_run only reports.
  AgingReport Vacuum(bool dry_run);
  // Applies journalctl's verbs once (store_vacuum.cc); dry_run only reports. Fails only when
  // the order log cannot be written (nothing removed then).
  Result<AgingReport> VacuumBy(const VacuumSpec& spec);
  // The timer's work (the daemon's tick): collects finished deletes, takes a fresh free
  // space figure, ages what `max-age` and the byte limits ask for, and logs one line when
  // directories were aged for the count limit since the last tick.
  void Tick();
  // Collects finished deletes: counts and logs failures, queues them for a retry.
  void CollectRemovals();
  // Checks that the trace directory was not deleted or renamed away; if it was, it is
  // re-created, the directories left behind stop being counted and the order log starts
  // again in the new directory. The daemon calls it on its status tick.
  void CheckTraceDir();

  // Receives a structured event for every directory created or aged (optional).
  void set_event_sink(StoreEventSink* sink) { sink_ = sink; }

  uint32_t record_num() const { return record_num_; }
  uint32_t exit_record_num() const { return exit_record_num_; }
  // The count limit of a class: record_num for host and device, exit_record_num for exit.
  uint32_t LimitOf(AgeClass c) const { return c == AgeClass::kExit ? exit_record_num_ : record_num_; }
  size_t count(AgeClass c) const { return classes_[static_cast<size_t>(c)].size(); }
  const StoreCounters& counters() const { return counters_; }
  // The daemon's one refusal throttle, given at construction: the service's refusal lines
  // ask it too (so there is no second one to wire).
  RefusalLog& refusals() const { return refusals_; }
  const RetentionSettings& retention() const { return retention_; }
  // The bytes the byte limits count: use per class, reserved, held, the free-space estimate.
  const SpaceAccount& space() const { return space_; }
  // Deletes decided and not yet finished (queued, running or failed and waiting to retry).
  size_t removals_pending() const { return pending_.size() + sweeps_outstanding_; }
  const FileSystem& fs() const { return fs_; }
  // The event's directory relative to the trace directory, or nullptr.
  const std::string* PathOf(uint64_t seq) const;
  std::optional<EventInfo> Find(uint64_t seq);
  // Find(seq)->bytes, or 0 for an unknown event, without building an EventInfo.
  uint64_t AllocatedBytesOf(uint64_t seq);
  // The dumps aging removed, oldest first: the newest kMaxAgedDumps, kept across restarts by
  // the order log's 'a' records (order_log.h).
  const std::deque<AgedDump>& aged_dumps() const { return aged_dumps_; }
  // Event directories with seq > after_seq, oldest first, at most `max`.
  std::vector<EventInfo> List(uint64_t after_seq, size_t max);

  // The order log is rewritten once it holds this many more records than live entries.
  static constexpr size_t kCompactSlack = 8192;
  static constexpr size_t kMaxOrderLogBytes = 64u << 20;
  // An aging pass of at most kRemoveNowMaxDirs directories (an event's, at a count or byte
  // limit) deletes each that is this small (at most kRemoveNowMaxFiles files, no
  // subdirectory, at most kRemoveNowMaxBytes) on the spot, before the reply, as CANN's own
  // writer does: no aside rename, no remover. Anything bigger, or more of them (a vacuum, a
  // lowered limit), is moved aside for the remover (MoveAside).
  static constexpr size_t kRemoveNowMaxDirs = 2;
  static constexpr size_t kRemoveNowMaxFiles = 4;
  static constexpr uint64_t kRemoveNowMaxBytes = 64 * 1024;

 private:
  struct Entry {
    OrderEntry meta;  // seq, class, device, uid, created_us, process dir, event dir
    std::string rel_path;
    EventKind kind = EventKind::kSchedule;
    int32_t pid = 0;
    uint32_t pins = 0;
    DiskUsage bytes;   // measured at recovery, then added as written; the budget counts .allocated
    uint64_t held = 0;  // of bytes.allocated: kept by passed descriptors (AddHeldBytes), not freed by aging
    bool sized = true;   // false for a recovered dir until SizeRecovered (or a use) measures it
    // false from BeginEvent until a file is opened in it: an event that ends so was refused
    // or abandoned, and leaves no directory (EndEvent).
    bool has_files = true;
    uint32_t saves = 0;  // saves (EventSpec::save) begun and not ended
    // A save into it was cut short (recovered with 'p' and no 'd') or ended incomplete: no
    // later save marks it complete.
    bool torn = false;
  };
  using ClassMap = std::map<uint64_t, Entry>;  // by creation sequence: oldest first
  struct Victim {
    AgeClass cls;
    ClassMap::iterator it;
  };

  Entry* FindEntry(uint64_t seq);
  // Plans the victims of class `c` if it held `extra` more directories than it does.
  std::vector<Victim> PlanVictims(AgeClass c, size_t extra);
  // Whether dump-keep spares `e` from the count limits now.
  bool Kept(const Entry& e, int64_t now_us) const;
  // Plans, under the aging policy, victims from the classes in `pool` merged in creation
  // order until `need` bytes are freed; skips pinned directories, `protect` and `skip`'s.
  std::vector<Victim> PlanBytes(std::span<const AgeClass> pool, uint64_t need, uint64_t protect, uint64_t* freed,
                                const std::unordered_set<uint64_t>* skip = nullptr);
  // Writes the victims' '-' records; false (logged) if the order log cannot be written.
  bool LogRemovals(const std::vector<Victim>& victims, const char* what);
  // Takes planned victims off the lists and hands them to the remover (their '-' records
  // must already be in the log).
  void Retire(const std::vector<Victim>& victims, AgingReason reason, AgingReport* report);
  // Deletes an aged directory on the spot if it is small (kRemoveNowMaxFiles): true once it
  // is gone. False leaves it to MoveAside and the remover, which retries and reports failures.
  bool RemoveNow(const Entry& e, const RemovalJob& job);
  // Moves an aged directory into the aside directory (one rename) and returns where the
  // remover is to delete it: there, or where it is if it cannot be moved.
  std::string MoveAside(std::string rel_path, const std::string& event_dir);
  // Recovery: the read grant of every live process directory, from the uid in the order log
  // (rechecked only if `vouched`), and in full for `unfinished`: process directories of
  // records whose event directory never appeared (a crash may have cut their grant short).
  // Returns whether every grant is now right.
  bool GrantRecovered(const std::vector<OrderEntry>& live, bool vouched,
                      const std::map<std::string, uint32_t>& unfinished);
  // A grant failed on the event path: the order log vouches for the grants no more.
  void WithdrawGrantStamp();
  // Recovery: hands what an earlier run left in the aside directory to the remover.
  void SweepAside(std::vector<RemovalJob>* sweeps);
  void Enforce(AgeClass c, bool dry_run, AgingReport* report);
  // Ages for the byte limits so that `incoming` more bytes fit; returns what is still missing.
  ByteNeed AgeForBytes(uint64_t incoming, uint64_t protect);
  void AgeByTime();
  Status RefuseHolder(uint32_t uid, uint64_t incoming, ByteNeed need);
  // Logs a refusal for `uid` when the daemon's refusal throttle says its line is due.
  void WarnRefusal(uint32_t uid, const std::string& why);
  Status ResolveLimits();
  void SampleSpace();
  // Measures a recovered directory the first time its size matters.
  void EnsureSized(Entry& e);
  void RetryFailed();
  Status AppendLog(const std::string& records);
  Status RewriteLog();
  Status OpenLog();
  void Adopt(OrderEntry meta);
  void RemoveProcessDirIfUnused(const std::string& name);
  // Takes back an event that ended with no file in it: its directory, its order-log record
  // and its place in the count, as if it had never begun. False if it cannot (kept then).
  bool Discard(uint64_t seq, Entry& e);
  // After the file system re-created the trace directory: forget what was left behind.
  void OnTraceDirReplaced();
  EventInfo InfoOf(uint64_t seq, Entry& e);
  std::string Abs(const std::string& rel) const { return fs_.trace_dir() + "/" + rel; }

  FileSystem& fs_;
  Remover& remover_;
  Clock& clock_;
  Logger& log_;
  RefusalLog& refusals_;
  uint32_t record_num_;
  int64_t dump_keep_us_ = 24ll * 3600 * 1000000;
  uint32_t exit_record_num_ = kExitRecordNumDefault;
  uint64_t next_seq_ = 1;
  std::array<ClassMap, kAgeClassCount> classes_;
  std::unordered_map<uint64_t, AgeClass> class_of_;
  std::unordered_map<std::string, uint64_t> by_path_;
  std::unordered_map<std::string, uint32_t> process_holds_;
  // Deletes decided and not yet done: logged with '-', handed to the remover (or failed and
  // waiting for the next pass). Kept so a log rewrite still records them.
  struct Pending {
    OrderEntry meta;
    uint64_t bytes = 0;   // what the removal will free
    bool failed = false;  // its job is in failed_, waiting for the next pass
  };
  std::map<uint64_t, Pending> pending_;
  std::vector<RemovalJob> failed_;
  // Aged directories deleted in place (they could not be moved aside): their names are
  // not reused until the delete is done.
  std::unordered_set<std::string> removing_paths_;
  uint64_t aside_serial_ = 1;  // the next name in the aside directory
  // The order log's 'g' record: every process directory's grant is as this stamp says
  // (FileSystem::GrantStamp); "" while one is not known to be.
  std::string grant_stamp_;
  std::deque<AgedDump> aged_dumps_;  // the order log's 'a' records, oldest first, at most kMaxAgedDumps
  size_t sweeps_outstanding_ = 0;  // recovery's deletes of what no log names, not yet done
  std::unique_ptr<WritableFile> log_file_;
  size_t log_records_ = 0;
  uint64_t trace_dir_generation_ = 0;
  StoreCounters counters_;
  RetentionSettings retention_;
  SpaceAccount space_;
  // The root over a limit refuses every uid: "accepting writes again" once when space
  // returns, with how many were refused meanwhile.
  bool refusing_ = false;
  uint64_t refused_while_full_ = 0;
  uint64_t count_aged_reported_ = 0;
  std::vector<uint64_t> unsized_;  // recovered dirs not measured yet (SizeRecovered)
  StoreEventSink* sink_ = nullptr;
  // BeginEvent's order-log record, kept between events so appending it allocates nothing.
  std::string records_scratch_;
  // OpenFile's relative path, kept for the same reason.
  std::string path_scratch_;
};

}  // namespace atraced
