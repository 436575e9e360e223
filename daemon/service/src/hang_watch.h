// The hang watch (issue 51, atraced.conf(5) hang-timeout): on each tick of the daemon, every
// live process with a job label (every one, with hang-watch-unlabelled) is sampled from the
// rings the daemon holds, and ProgressWatch (progress_watch.h) says which stalled. When a
// process of job J stalls, it and every other live process of J on this host that runs as
// the same uid are dumped in one pass (DumpForHang, hang_dump_path.h), as each one's own
// user, and each gets one journal entry (ProcessEvent::kHang).
//
// Who may set off whose dump: labels are a process's own word, so a stall dumps only the
// job's processes of the stalled process's uid; a job label never reaches another user's
// processes (docs/SECURITY.md). A dumped process is marked captured and judged again only
// after its rings move; the host dumps at most hang-dumps-per-hour processes an hour (a
// token bucket), past which a stall is logged and left undumped.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "atraced/admission/rate_limit.h"
#include "atraced/service/progress_watch.h"
#include "client.h"
#include "client_table.h"
#include "service_context.h"

namespace atraced {

class ProcessDumps;

class HangWatch {
 public:
  HangWatch(const ServiceContext& ctx, ClientTable& clients, ProcessDumps& dumps);

  // The daemon's tick: sample, judge, capture. O(watched processes) while nothing stalls.
  void Tick();
  // LABELS were applied to c's process: its start entry (a job's hosts and ranks are in the
  // journal before anything is saved).
  void Started(const Client& c);

  // What `list --live` shows of the process whose rings `holder` holds: the watch's view as
  // of its last tick (every ring holder is sampled, watched or not).
  struct Live {
    bool watched = false;                     // labelled (or hang-watch-unlabelled), the watch on
    std::chrono::milliseconds timeout{0};     // its own, or the daemon's; 0: not watched
    bool seen = false;                        // sampled by a tick yet (else nothing below is known)
    bool never_wrote = true;                  // no record in any ring: not judged
    std::chrono::system_clock::time_point last_moved{};  // when its rings last moved (or first seen)
    std::chrono::milliseconds still_for{0};   // since then
    bool stalled = false, busy = false;       // judged stalled (busy: using CPU), not moved since
    bool captured = false;                    // dumped with its job for another's stall
  };
  Live LiveOf(const Client& holder);

  uint64_t stalls() const { return stalls_; }            // processes judged stalled
  uint64_t dumped() const { return dumped_; }            // directories written by the watch
  uint64_t rate_limited() const { return rate_limited_; }  // left undumped by hang-dumps-per-hour

 private:
  using Key = ProgressWatch::Key;
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.start_ticks * 1000003u ^ uint32_t(k.pid)); }
  };
  // The timeout `c`'s process is watched with; 0: not watched.
  std::chrono::milliseconds TimeoutOf(const Client& c);
  // A journal entry's facts of c's process.
  ProcessEvent EventOf(const Client& c, ProcessEvent::Kind kind);
  void Capture(const std::vector<ProgressWatch::Stall>& stalls, std::chrono::system_clock::time_point now);

  const ServiceContext& ctx_;
  ClientTable& clients_;
  ProcessDumps& dumps_;
  ProgressWatch watch_;
  TokenBucket dump_budget_;
  std::vector<ProgressWatch::Sample> samples_;            // reused each tick
  std::unordered_map<Key, size_t, KeyHash> sample_of_;    // reused each tick: one sample per process
  std::set<std::pair<uint32_t, std::string>> capturing_;  // (uid, job) whose dump is under way
  uint64_t stalls_ = 0, dumped_ = 0, rate_limited_ = 0;
};

}  // namespace atraced
