// The trace store: names, creates, pins and ages the event directories of one trace root.
//
// Threading: a TraceStore has a single owner and no locks. In the daemon that owner is the
// storage executor (one thread), so creation, aging and writes never race, and a slow
// recursive delete delays only other disk work, never accepts or reads on the socket.
//
// Ordering: every event directory atraced creates carries a marker file holding a creation
// sequence number (names.h). Aging order is that sequence, recovered from the tree at start:
// no state file, no mtime, and a clock that jumps backwards cannot reorder anything.
//
// Creation is atomic: the directory is built as .atraced_staging_{seq} (with its marker)
// and renamed into place, so a crash leaves either nothing or a complete, counted directory;
// Recover() sweeps the staging leftovers.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "atraced/core/aging.h"
#include "atraced/core/clock.h"
#include "atraced/core/file_system.h"
#include "atraced/core/log.h"
#include "atraced/core/names.h"
#include "atraced/core/status.h"
#include "atraced/core/store_events.h"

namespace atraced {

struct EventSpec {
  ProcessDirName process;  // trace_{pgid}_{pid}_{time} the event belongs to
  EventKind kind = EventKind::kSchedule;
  int32_t pid = 0;   // {event}_event_{pid}_{time}
  std::string time;  // "" = now by the store's clock; else 20 digits (a device's own time)
  Side side = Side::kHost;
  uint32_t device_id = 0;
  uint32_t uid = 0;  // of the client, for listing
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
  uint64_t bytes = 0;
  uint32_t pins = 0;
};

struct StoreCounters {
  uint64_t events_created = 0;
  uint64_t dirs_aged = 0;
  uint64_t removal_failures = 0;
  uint64_t bytes_written = 0;
};

struct AgingReport {
  std::vector<std::string> removed;  // relative paths
  std::vector<std::string> failed;
};

class TraceStore {
 public:
  TraceStore(FileSystem& fs, Clock& clock, Logger& log, uint32_t record_num);

  // Rebuilds the lists from the tree, removes half-made directories and applies the limit.
  // Call once before anything else.
  Status Recover();

  // Creates the event directory (or finds the existing one with the same path) and pins it.
  // Then ages its class with the new directory protected.
  Result<BeginResult> BeginEvent(const EventSpec& spec);
  // Releases one pin; an unpinned class over its limit is aged at once.
  void EndEvent(uint64_t seq);

  // Opens (creating if needed) a file in a pinned event; `file_name` must be one of the
  // trace file forms of names.h.
  Result<UniqueFd> OpenFile(uint64_t seq, const std::string& file_name);
  // Accounts bytes written into an event's files (by the daemon or through a passed fd).
  void AddBytes(uint64_t seq, uint64_t bytes);

  // A process directory held by a live client is not removed when aging empties it.
  void HoldProcessDir(const std::string& name);
  void ReleaseProcessDir(const std::string& name);

  // Applies a new record number at once.
  void SetRecordNum(uint32_t record_num);
  // Applies the limits now, retrying earlier failed removals; dry_run only reports.
  AgingReport Vacuum(bool dry_run);

  // Receives a structured event for every directory created or aged (optional).
  void set_event_sink(StoreEventSink* sink) { sink_ = sink; }

  uint32_t record_num() const { return record_num_; }
  size_t count(AgeClass c) const { return classes_[static_cast<size_t>(c)].size(); }
  const StoreCounters& counters() const { return counters_; }
  const FileSystem& fs() const { return fs_; }
  std::optional<EventInfo> Find(uint64_t seq);
  // Event directories with seq > after_seq, oldest first, at most `max`.
  std::vector<EventInfo> List(uint64_t after_seq, size_t max);

 private:
  struct Entry {
    std::string rel_path;
    std::string process_dir;
    EventKind kind = EventKind::kSchedule;
    EventMarker marker;
    int32_t pid = 0;
    uint32_t pins = 0;
    std::optional<uint64_t> bytes;  // unknown for recovered dirs until someone asks
  };
  using ClassMap = std::map<uint64_t, Entry>;  // by creation sequence: oldest first

  Entry* FindEntry(uint64_t seq, AgeClass* cls = nullptr);
  void Enforce(AgeClass c, bool dry_run, AgingReport* report);
  void RemoveProcessDirIfUnused(const std::string& name);
  EventInfo InfoOf(uint64_t seq, Entry& e);
  std::string Abs(const std::string& rel) const { return fs_.trace_dir() + "/" + rel; }

  FileSystem& fs_;
  Clock& clock_;
  Logger& log_;
  uint32_t record_num_;
  uint64_t next_seq_ = 1;
  std::array<ClassMap, kAgeClassCount> classes_;
  std::unordered_map<uint64_t, AgeClass> class_of_;
  std::unordered_map<std::string, uint64_t> by_path_;
  std::unordered_map<std::string, uint32_t> process_holds_;
  StoreCounters counters_;
  StoreEventSink* sink_ = nullptr;
};

}  // namespace atraced
