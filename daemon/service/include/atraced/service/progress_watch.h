// The hang watch's judgement (issue 51): which live processes stopped making progress.
//
// Each tick the daemon hands it one sample per watched process: how far its rings have been
// written (the sum of their write_index, read from the mappings the daemon already holds;
// the process is asked nothing) and its timeout. A process is *stalled* when that figure has
// not changed for its timeout while it lived. A process that never wrote a record (the sum
// is 0) is not judged: a rank still loading its model is not hung. A stall is reported once;
// the process is judged again only after its rings moved.
//
// Busy or blocked: CPU time (/proc/PID/stat utime + stime, through `cpu`) is read at the
// first tick the rings stood still for half the timeout, and again at the verdict (a tick
// later at the soonest); never for a process whose rings move or rest between records, so a
// tick costs O(processes) memory reads and no system call for a healthy job. A process that used at least kBusyShare of one CPU meanwhile was busy (a
// spin, a livelock), else blocked (a lock, a collective waiting for a peer). The share is
// low on purpose: on a loaded host a spinning thread gets a small slice of a CPU, and a
// blocked process's timer threads use well under one percent.
//
// Time is the Clock's (system time in the daemon): a clock stepped back restarts every
// process's wait; a step forward may shorten one wait once.
//
// A sample with timeout 0 is tracked (when its rings last moved, for `list --live`) but never
// judged: a process the watch does not cover (unlabelled, or the watch off) costs the same
// memory read and no /proc read.
//
// Pure: no rings, no /proc; tests drive it with a fake clock (tests/service/progress_watch_test.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace atraced {

class ProgressWatch {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  struct Key {
    int32_t pid = 0;
    uint64_t start_ticks = 0;  // a reused pid is another process
    bool operator==(const Key&) const = default;
  };
  struct Sample {
    Key key;
    uint64_t written = 0;                 // the sum of its rings' write_index
    std::chrono::milliseconds timeout{0};  // 0: tracked, never judged
  };
  struct Stall {
    Key key;
    std::chrono::milliseconds stalled_for{0};  // since its rings last moved (as first seen still)
    bool busy = false;                         // it used CPU time meanwhile (kBusyShare)
    std::optional<std::chrono::milliseconds> cpu_used;  // nullopt: /proc could not tell
  };
  // The process's CPU time so far, user and system; nullopt when it cannot be read (gone).
  using CpuReader = std::function<std::optional<std::chrono::milliseconds>(const Key&)>;

  // A twentieth of one CPU over the stall: more is a spin, less a wait with a timer or two.
  static constexpr double kBusyShare = 0.05;

  explicit ProgressWatch(CpuReader cpu) : cpu_(std::move(cpu)) {}

  // One tick: `samples` are every process watched now (one each); a process absent from
  // them is forgotten (it left, or stopped being watched). Returns the processes that became
  // stalled at this tick. O(samples); `cpu` is called only for processes standing still.
  std::vector<Stall> Observe(TimePoint now, std::span<const Sample> samples);

  // `key` was dumped with its job (another process stalled): like a stalled one, it is not
  // reported until its rings move. A process not watched is left alone.
  void Captured(const Key& key);
  // Whether `key` was reported stalled (or captured) and has not moved since.
  bool Stalled(const Key& key) const;
  // How long `key`'s rings have stood still (zero when moving, never written or unknown).
  std::chrono::milliseconds StillFor(const Key& key, TimePoint now) const;
  // What the watch knows of `key` now (`list --live`): nothing for a process not sampled.
  struct View {
    bool known = false;        // sampled at the last tick
    bool never_wrote = true;   // its rings' sum was 0: not judged
    TimePoint moved{};         // when its rings last moved (or it was first seen)
    std::chrono::milliseconds still{0};  // since then
    bool stalled = false;      // reported stalled, not moved since
    bool busy = false;         // ... and it used CPU time meanwhile
    bool captured = false;     // dumped with its job (another process stalled), not moved since
  };
  View Look(const Key& key, TimePoint now) const;
  size_t watched() const { return states_.size(); }

 private:
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.start_ticks * 1000003u ^ uint32_t(k.pid)); }
  };
  struct State {
    uint64_t written = 0;
    TimePoint moved{};                             // when `written` last changed (or first seen)
    bool still_seen = false;                       // a tick saw it still: the CPU baseline is taken
    TimePoint still_since{};
    std::optional<std::chrono::milliseconds> cpu_at_still;
    bool reported = false;  // stalled or captured: not judged until it moves
    bool stalled = false, busy = false;  // its own verdict, while reported
    uint64_t generation = 0;
  };

  CpuReader cpu_;
  std::unordered_map<Key, State, KeyHash> states_;
  uint64_t generation_ = 0;
  TimePoint last_now_{};
};

}  // namespace atraced
