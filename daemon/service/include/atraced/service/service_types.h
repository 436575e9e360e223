// The plain types a session and a test exchange with the service (trace_service.h): who the
// peer is, what the operator set, the replies of one batch and the service's counters.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "atraced/admission/fd_budget.h"
#include "atraced/admission/rate_limit.h"
#include "atraced/admission/uid_share.h"
#include "atraced/base/unique_fd.h"
#include "atraced/io/job_runner.h"
#include "atraced/proto/codec.h"
#include "atraced/proto/ledger_summary.h"
#include "atraced/processes/crash_inspector.h"
#include "atraced/rings/counter_clock.h"
#include "atraced/rings/unmapper.h"

namespace atraced {

class Clock;
class Logger;
class ProcessTable;
class TraceStore;

struct PeerCredentials {
  int32_t pid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// The hang watch (hang_watch.h): a process carrying a job label whose rings advance for none
// of `timeout` while it lives is stalled, and it and the rest of its job on this host are
// dumped (the daemon's own PROCESS_DUMP).
struct HangWatchSettings {
  // The longest a watched process may go without a record; a process may ask for less
  // (ATRACE_HANG_TIMEOUT, sent with its labels), never more. 0: nothing is watched.
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
  bool watch_unlabelled = false;  // processes without a job label too, each its own job
  uint32_t dumps_per_hour = 64;   // processes the watch may dump per hour on this host
};

// What the operator bounds (atraced.conf, LimitsFrom in daemon/app), and who the daemon is.
// The rate limit, max-bytes-per-client and the crash budget are applied again at SIGHUP
// (TraceService::ApplyLimits); the rest size the service's pools once, at start-up.
struct ServiceLimits {
  uint32_t max_events_per_client = 64;
  uint32_t max_files_per_client = 256;
  uint32_t daemon_uid = 0;              // may always forward
  std::optional<gid_t> forwarder_gid;   // members may forward
  std::optional<gid_t> reader_gid;      // members read every user's traces (LIST shows them all)
  std::string root;                     // for STATUS
  // Rings (1.1) held per connection and in all: each costs one read-only mapping of at most
  // ATR_RING_MAX_BYTES of address space and no descriptor (held_ring.h). CANN allows 100
  // objects per tracer type; the rest is room for destroyed exitSave objects.
  uint32_t max_rings_per_client = 256;
  // Every mapping is one of the kernel's vm.max_map_count (65530 by default) for the whole
  // daemon: the total stays well below it.
  uint32_t max_rings_total = 32768;
  // What holding rings may cost in memory (HeldRing::MemoryCost: the mapping, which a save
  // may fault in whole, and the struct entries), in all.
  uint64_t max_ring_memory = 4ull << 30;
  // The percent of max_rings_total and of max_ring_memory one uid may hold, root and the
  // daemon's uid included (-EBUSY past it).
  uint32_t uid_ring_share = 25;
  // Event directories a client process may create (rate_limit.h): one bucket for schedule
  // events and another for exit and stackcore ones, so chatty schedule traffic cannot
  // starve a process's last words. Refused with -EAGAIN.
  RateLimit rate_limit;
  // Bytes one client process may write over its life: its appends, what it wrote through
  // passed descriptors (re-measured on the tick, also after FILE_CLOSE, until the directory
  // is aged) and what the daemon wrote for it (ring saves, crash and death reports); 0: no
  // bound. -EBUSY.
  uint64_t max_bytes_per_client = 0;
  // CRASH: how long the look from outside (ServiceDependencies::crash_inspector) may take on
  // the crash runner's thread; the process's handler waits longer (5 s by default).
  std::chrono::milliseconds crash_budget{2000};
  // Each unwind costs a helper process: one uid gets at most this many unwinds a minute
  // (a crash loop, or a user forking processes that crash on purpose). Past it the report
  // has threads and maps but no backtrace, and says why.
  uint32_t crash_unwinds_per_uid_per_minute = 5;
  // What the saves queued for the workers may reserve, in all, and the percent of it one
  // uid may hold, root and the daemon's uid included (-EAGAIN past it).
  uint64_t max_queued_bytes = 1ull << 30;
  uint32_t uid_queued_share = 25;
  HangWatchSettings hang;  // applied again at SIGHUP
};

// A journal entry about a live process (docs/FLEET.md): a process that sent a job label
// connected (kStart), or the hang watch dumped it (kHang). Every string but `dir` is the
// process's own bytes or read from it: the sink escapes and bounds them.
struct ProcessEvent {
  enum class Kind { kStart, kHang } kind = Kind::kStart;
  int32_t pid = 0;
  uint32_t uid = 0;
  std::string program;
  proto::Labels labels;
  std::chrono::milliseconds hang_timeout{0};  // the timeout it is watched with; 0: not watched
  // kHang:
  std::string state;                          // "busy", "blocked", or "running" (dumped with its job)
  std::chrono::milliseconds stalled_for{0};   // since its rings last moved
  int32_t stalled_pid = 0;                    // the process whose stall set the capture off
  std::string dir;                            // its dump's directory, or "" (see `refused`)
  std::string refused;                        // why it was not dumped
  std::vector<std::string> top_frames;        // the main thread's, innermost first
  std::vector<std::pair<std::string, std::string>> last_records;  // tracer -> its newest record
  // Its collective ledger's communicators (one per name, the instance in use), read when the
  // hang watch judged it; empty without a ledger. Names are the process's bytes.
  std::vector<proto::CommunicatorSummary> communicators;
  bool completion_tracked = false;  // the ledger records completions, not enqueues only
};

class ProcessEventSink {
 public:
  virtual ~ProcessEventSink() = default;
  virtual void OnProcessEvent(const ProcessEvent& event) = 0;
};

// What the service needs from the daemon, given once at construction (TraceService's
// constructor). Each must outlive the service. The store, the process table, the clock, the
// log and both runners are required; the rest may be null, as each says.
struct ServiceDependencies {
  TraceStore* store = nullptr;
  ProcessTable* processes = nullptr;
  Clock* clock = nullptr;
  Logger* log = nullptr;
  // Where CRASH and STACK_DUMP are inspected (the daemon's ThreadCrashRunner). Its `done`
  // runs on the event loop, never after the service is destroyed.
  CrashRunner* crash_runner = nullptr;
  // Who writes ring saves, crash and death reports (docs/IO_WORKERS.md; the daemon's IoPool).
  // The same rules.
  JobRunner* io_runner = nullptr;
  // Asks for TraceService::CheckDepartures to run `check` after `in` (the event loop's
  // timer); a new request replaces the one armed. Empty: nobody re-checks (a test calls
  // CheckDepartures itself).
  std::function<void(std::chrono::milliseconds in, std::function<void()> check)> schedule_departures;
  // Who looks at a crashed process from outside (threads, backtrace, maps). nullptr: the
  // report says there is no unwinder, and the rings are still written.
  CrashInspector* crash_inspector = nullptr;
  // Who unmaps a ring once nobody holds it (atraced/rings/unmapper.h). nullptr: munmap on the
  // thread that let go; the daemon gives a BackgroundUnmapper.
  Unmapper* ring_unmapper = nullptr;
  // The daemon's cycle counter: whether HELLO grants ATR_FEATURE_RING_COUNTER, and the clock
  // snapshots its rings are placed through (atraced/rings/counter_clock.h). nullptr: never
  // granted.
  core::CounterClock* counter_clock = nullptr;
  // The connections each uid holds (the listener's, for STATUS); nullptr: not reported.
  const UidShare* connections = nullptr;
  // Charged one descriptor per open file and per descriptor waiting to be passed, to the
  // peer's uid (fd_budget.h). nullptr: no budget (tests of other things).
  FdBudget* fd_budget = nullptr;
  // Where a labelled process's start and the hang watch's captures are journalled (the
  // daemon's journal sink, when stderr is the journal). nullptr: the log lines alone.
  ProcessEventSink* process_events = nullptr;
};

// Replies to one batch of requests, in request order.
struct ReplyBatch {
  struct PassedFd {
    size_t offset = 0;  // the descriptor travels with the reply frame starting here
    UniqueFd fd;
    FdCharge charge;    // released with the batch, once the descriptor went out
  };
  std::vector<uint8_t> bytes;
  std::vector<PassedFd> fds;
  bool close_after = false;  // the connection ends once these replies are sent
};

// One device's traces as STATUS shows them (wire.h atr_status_device).
struct DeviceCounts {
  uint64_t events = 0;  // device-side events begun for it, counted here
  // What processes' device receivers said in DEVICE_STATS, summed within the bounds of
  // device_reports.h (a process only for its own devices, each uid's share capped).
  uint64_t received = 0, saved = 0, dropped_invalid = 0, dropped_daemon = 0, reconnects = 0;
};

struct ServiceCounters {
  uint64_t requests = 0;
  uint64_t requests_refused = 0;
  uint64_t forwarder_claims = 0;
  uint64_t rings_refused = 0;  // registrations refused: a bound, a bad memfd or header
  uint64_t rings_saved = 0;    // ring files written
  uint64_t deaths_recorded = 0;  // stackcore dirs written for processes that died without GOODBYE
  uint64_t refused_rate_limit = 0;    // events refused by a client's rate limit
  uint64_t refused_client_bytes = 0;  // writes refused by max-bytes-per-client
  uint64_t crashes_recorded = 0; // stackcore dirs written at CRASH, while the process waited
  uint64_t stack_dumps_written = 0;  // stackcore dirs written at STACK_DUMP (CANN's on-demand stack dump)
  std::map<uint32_t, DeviceCounts> devices;  // by device id (<= ATR_MAX_DEVICE_ID: at most 1024)
};

}  // namespace atraced
