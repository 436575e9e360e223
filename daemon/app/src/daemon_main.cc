#include "atraced/app/daemon_main.h"

#include <grp.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "atraced/app/config.h"
#include "atraced/app/journal_events.h"
#include "atraced/app/limits.h"
#include "atraced/app/listen_socket.h"
#include "atraced/app/notify.h"
#include "atraced/store/posix_file_system.h"
#include "atraced/processes/process_table.h"
#include "atraced/store/record_num.h"
#include "atraced/store/remover.h"
#include "atraced/store/root.h"
#include "atraced/service/trace_service.h"
#include "atraced/store/trace_store.h"
#include "atraced/app/crash_runner.h"
#include "atraced/app/root_lock.h"
#include "atraced/io/io_pool.h"
#include "atraced/crash/proc_crash_inspector.h"
#include "atraced/crash/unwind_helper.h"
#include "atraced/ipc/asio.h"
#include "atraced/ipc/listener.h"
#include "atraced/proto/socket_path.h"

namespace atraced {
namespace {

// On SIGTERM: requests under way and saves on the I/O workers get kShutdownGrace to land.
// Then the saves no worker has started are answered -ESHUTDOWN; the ones being written get
// kSaveGrace more to finish (then they too are answered -ESHUTDOWN); then the replies get
// kReplyFlush to go out. All of it well inside systemd's TimeoutStopSec (15 s).
constexpr auto kShutdownGrace = std::chrono::seconds(3);
constexpr auto kSaveGrace = std::chrono::seconds(5);
constexpr auto kReplyFlush = std::chrono::seconds(1);
constexpr auto kStatusInterval = std::chrono::seconds(2);

// The hang watch's settings in the ready and reload lines: what an operator checks after a
// SIGHUP (the watch reads them at its next tick).
std::string HangWatchNote(const HangWatchSettings& h) {
  return "hang timeout " + (h.timeout.count() > 0 ? std::to_string(h.timeout.count()) + " ms" : std::string("off")) +
         ", unlabelled processes " + (h.watch_unlabelled ? "watched" : "not watched") + ", hang dumps per hour " +
         std::to_string(h.dumps_per_hour);
}

// STATUS= must stay one line.
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// Flags, then the environment, then the configuration file, then the default.
uint32_t EffectiveRecordNum(const Config& config, Logger& log) {
  if (config.record_num) {
    log.Info("set dir num=", *config.record_num, " by --record-num.");
    return *config.record_num;
  }
  return RecordNumFromEnv(std::getenv("ASCEND_TRACE_RECORD_NUM"), config.configured_record_num, log);
}

// Raises the soft RLIMIT_NOFILE to the hard limit and returns the soft limit in force.
uint64_t RaiseDescriptorLimit(Logger& log) {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    log.Warning("cannot read RLIMIT_NOFILE: ", std::strerror(errno), "; assuming 1024");
    return 1024;
  }
  const rlim_t was = rl.rlim_cur;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
      log.Warning("cannot raise RLIMIT_NOFILE from ", was, " to ", rl.rlim_max, ": ", std::strerror(errno));
      rl.rlim_cur = was;
    }
  }
  log.Info("descriptor limit: soft ", rl.rlim_cur, " (was ", was, "), hard ", rl.rlim_max);
  return rl.rlim_cur;
}

class Daemon {
 public:
  Daemon(Config config, std::vector<std::string> args) : config_(std::move(config)), args_(std::move(args)) {}

  int Run() {
    Logger& log = log_;
    log.set_max_level(config_.log_level);
    if (!config_.socket_path) {
      if (Status st = CheckDefaultSocketPlace(proto::DefaultDaemonSocketPath()); !st.ok()) return Fail(1, st.message());
    }
    auto root = ResolveRoot(RootSourcesFromEnvironment(config_.root, config_.configured_root), log);
    if (!root.ok()) return Fail(1, root.status().message());
    const uint32_t record_num = EffectiveRecordNum(config_, log);
    std::optional<gid_t> forwarder_gid;
    if (config_.forwarder_group) {
      const struct group* g = ::getgrnam(config_.forwarder_group->c_str());
      if (g == nullptr) return Fail(2, "forwarder-group: no group named [" + *config_.forwarder_group + "]");
      forwarder_gid = g->gr_gid;
    }
    FdBudget fd_budget(FdBudget::MakePlan(RaiseDescriptorLimit(log), config_.uid_descriptor_share,
                                          PosixFileSystem::kDirCacheSize));
    const FdBudget::Plan& plan = fd_budget.plan();
    log.Info("descriptor budget: ", plan.budget, " for clients, at most ", plan.per_uid, " per uid (uid-descriptor-share ",
             config_.uid_descriptor_share, "%), ", plan.reserve, " reserved for accept, recovery and aging");
    std::optional<gid_t> reader_gid;
    if (config_.reader_group) {
      const struct group* g = ::getgrnam(config_.reader_group->c_str());
      if (g == nullptr) return Fail(2, "reader-group: no group named [" + *config_.reader_group + "]");
      reader_gid = g->gr_gid;
    }
    auto fs = PosixFileSystem::Open(root->path, reader_gid);
    if (!fs.ok()) return Fail(1, "cannot open the trace directory: " + fs.status().message());
    // Checked once, when the trace directory was opened: what falls back, said once.
    if (!(*fs)->no_acl_warning().empty()) log.Warning((*fs)->no_acl_warning());
    log.Info("readers: each uid reads its own traces; root", config_.reader_group ? " and group " + *config_.reader_group : "",
             " read all");
    // Before recovery, for the daemon's whole life (root_lock.h).
    auto root_lock = LockTraceRoot((*fs)->trace_dir());
    if (!root_lock.ok()) return Fail(1, root_lock.status().message());
    // Deletes of aged directories run on their own thread, off every client's path (but for
    // an event's few files, deleted on the spot as CANN does: TraceStore::RemoveNow).
    BackgroundRemover remover(**fs);

    SystemClock clock;
    ProcProcessTable processes;
    // Structured journal entries only when stderr really is the journal (never on a
    // terminal or in tests); set before Recover so start-up aging is reported too.
    std::optional<JournalEventSink> journal_sink;
    // The daemon's one refusal throttle (refusal_log.h): the store's refusals and the
    // service's (TraceStore::refusals) ask it.
    RefusalLog refusals;
    TraceStore store(**fs, remover, clock, log, refusals, record_num);
    store.SetExitRecordNum(config_.exit_record_num);  // before Recover, which applies them
    store.SetDumpKeep(config_.dump_keep);
    (void)store.SetRetention(config_.retention);      // resolved against the file system by Recover
    if (StderrIsJournal()) {
      journal_sink.emplace();
      store.set_event_sink(&*journal_sink);
      log.Info("stderr is the journal: sending structured entries for created and aged event dirs, labelled "
               "processes' starts and the hang watch's dumps");
    }
    // Recovery and the first aging pass finish before anything is accepted.
    if (Status st = store.Recover(); !st.ok()) return Fail(1, "recovery failed: " + st.message());
    // Everything the service is given is built before it and so destroyed after it. Rings
    // are unmapped off the loop (unmapper.h): the service may hand it the last ones as it goes.
    BackgroundUnmapper ring_unmapper;
    // Measured before the first HELLO: whether libraries may stamp with the cycle counter.
    core::CounterClock counter_clock(&log);
    counter_clock_ = &counter_clock;
    // The listener's, one uid's share of max-clients; reported in STATUS by the service.
    UidShare connections("connections", "connection", "uid-connection-share", config_.max_clients,
                         config_.uid_connection_share);
    // CRASH: threads and maps from /proc, the backtrace from this binary run as the unwind
    // helper (daemon/crash/unwind_helper.h).
    crash::ProcCrashInspector crash_inspector("/proc/self/exe", config_.crash_all_threads != 0);

    asio::io_context io(1);
    // Re-checks processes whose connections closed without GOODBYE (TraceService::CheckDepartures).
    asio::steady_timer departures(io);
    // CRASH is inspected on a thread of its own, the results posted back to this loop: one
    // process's crash stalls no other client (crash_runner.h).
    ThreadCrashRunner crash_runner(io);
    // Ring saves, crash and death reports are written by the I/O workers, their completions
    // posted back to this loop (docs/IO_WORKERS.md). The pool goes after the service: a
    // completion it posts then is never run, the loop having stopped.
    IoPool io_pool(config_.io_workers != 0 ? config_.io_workers : IoPool::AutoWorkers(),
                   [&io](std::function<void()> done) { asio::post(io, std::move(done)); });

    TraceService::Dependencies deps;
    deps.store = &store;
    deps.processes = &processes;
    deps.clock = &clock;
    deps.log = &log;
    deps.crash_runner = &crash_runner;
    deps.io_runner = &io_pool;
    deps.schedule_departures = [&departures](std::chrono::milliseconds in, std::function<void()> check) {
      departures.expires_after(in);  // cancels a wait already armed
      departures.async_wait([check = std::move(check)](const boost::system::error_code& ec) {
        if (!ec) check();
      });
    };
    deps.crash_inspector = &crash_inspector;
    deps.ring_unmapper = &ring_unmapper;
    deps.counter_clock = &counter_clock;
    deps.connections = &connections;
    deps.fd_budget = &fd_budget;
    deps.process_events = journal_sink ? &*journal_sink : nullptr;  // start and hang entries
    ServiceLimits limits = LimitsFrom(config_);
    limits.daemon_uid = ::geteuid();
    limits.forwarder_gid = forwarder_gid;
    limits.reader_gid = reader_gid;
    limits.root = root->path;
    TraceService service(std::move(deps), std::move(limits));

    // Recovered dirs are sized for the byte budget after the socket accepts, a slice at a
    // time between requests (TraceStore::SizeRecovered), not before: a walk of every
    // directory would triple the time to ready.
    std::function<void()> size_slice = [&store, &io, &size_slice] {
      if (store.SizeRecovered(256) > 0) asio::post(io, size_slice);
    };
    asio::post(io, size_slice);
    // Catch the signals before the socket exists: a SIGTERM that arrives between listen and
    // the first wait is then queued by Asio and handled as a clean stop, not the default kill.
    asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
    // tick_timer_ lives on `io`: it must go before `io` does, on every way out of Run.
    struct ResetTimer {
      std::optional<asio::steady_timer>& timer;
      ~ResetTimer() { timer.reset(); }
    } reset_tick_timer{tick_timer_};
    auto socket = OpenListenSocket(io,
                                   {config_.socket_path.value_or(proto::DefaultDaemonSocketPath()), config_.socket_group,
                                    /*make_directory=*/!config_.socket_path},
                                   log);
    if (!socket.ok()) return Fail(socket.status().err() == EINVAL ? 2 : 1, socket.status().message());
    const std::optional<BoundSocketFile> bound = socket->bound;

    // One thread runs the loop and owns the store and the service: requests never hop
    // between threads (docs/BENCHMARKS.md measures why).
    service_ = &service;
    crash_inspector_ = &crash_inspector;

    ListenerOptions listener_options;
    listener_options.idle_timeout = std::chrono::seconds(config_.idle_timeout_s);
    listener_options.fd_budget = &fd_budget;
    listener_options.connections = &connections;
    Listener listener(io, std::move(socket->acceptor), service, log, listener_options);
    listener.Start();
    log.Notice("atraced ready: trace dir ", (*fs)->trace_dir(), " (root from ", root->source, "), socket ",
               socket->description, ", record num ", record_num, ", io workers ", io_pool.workers(), ", ", HangWatchNote(config_.hang));
    Notify("READY=1\nSTATUS=" + service.StatusLine());

    asio::steady_timer ticker(io);
    std::function<void()> wait_signal = [&] {
      signals.async_wait([&](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        if (sig == SIGHUP) {
          Reload();
          wait_signal();
          return;
        }
        log.Notice("stopping on signal ", sig);
        stopping_ = true;
        Notify("STOPPING=1\nSTATUS=Stopping");
        listener.Stop();
        StopWhenDrained(io, listener, ticker,
                        Stopping{std::chrono::steady_clock::now() + kShutdownGrace, false, false, std::nullopt});
      });
    };
    wait_signal();
    StartTicker(io);

    io.run();
    tick_timer_.reset();  // it lives in `io`, which ends with this scope
    // A socket file left behind would make the next client's error "nothing listens" rather
    // than "no daemon socket"; systemd's own socket stays, it is systemd's to keep.
    if (bound) RemoveSocketFile(*bound, log);

    // Sessions are closed, their events ended. Deletes still queued are left to the next
    // start (their removal is in the order log); the remover finishes the one it is running.
    log.Notice("atraced stopped");
    return 0;
  }

 private:
  int Fail(int code, const std::string& message) {
    log_.Error(message);
    Notify("STATUS=Failed to start up: " + FirstLine(message));
    return code;
  }

  // SIGHUP: re-read the configuration file and apply the record numbers, the retention and
  // per-client limits and the crash keys at once.
  void Reload() {
    Notify(ReloadingMessage(MonotonicUsec()) + "\nSTATUS=Reloading configuration");
    std::vector<const char*> argv;
    for (auto& a : args_) argv.push_back(a.c_str());
    ParsedCommandLine cl = ParseCommandLine(static_cast<int>(argv.size()), argv.data());
    if (cl.outcome != ParsedCommandLine::Outcome::kRun) {
      log_.Error("reload refused, keeping the running configuration: ", cl.output);
      Notify("READY=1\nSTATUS=Reload refused, running configuration kept: " + FirstLine(cl.output));
      return;
    }
    log_.set_max_level(cl.config.log_level);
    uint32_t record_num = EffectiveRecordNum(cl.config, log_);
    log_.Notice("reloaded configuration; record num ", record_num, ", exit record num ", cl.config.exit_record_num,
                ", crash-all-threads ", cl.config.crash_all_threads, ", crash-unwind-timeout-ms ",
                cl.config.crash_unwind_timeout_ms, ", ", HangWatchNote(cl.config.hang));
    service_->store().SetRecordNum(record_num);
    service_->store().SetDumpKeep(cl.config.dump_keep);
    service_->store().SetExitRecordNum(cl.config.exit_record_num);
    if (Status st = service_->store().SetRetention(cl.config.retention); !st.ok()) {
      log_.Error("reload: cannot apply the byte limits: ", st.message());
    }
    service_->ApplyLimits(LimitsFrom(cl.config));
    crash_inspector_->set_all_threads(cl.config.crash_all_threads != 0);
    Notify("READY=1\nSTATUS=Reloaded; record num " + std::to_string(record_num));
  }

  // WATCHDOG=1 at half of WATCHDOG_USEC, and STATUS= updates. The tick runs on the loop
  // that serves every request, so a stuck loop stops the pings and systemd restarts the
  // daemon. Each tick also collects finished deletes, so a failure is logged even when no
  // client is active.
  void StartTicker(asio::io_context& io) {
    uint64_t usec = 0;
    if (::sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdog_ = std::chrono::microseconds(usec / 2);
    tick_timer_.emplace(io);
    Tick(io);
  }
  void Tick(asio::io_context& io) {
    auto interval = watchdog_ ? std::min<std::chrono::microseconds>(*watchdog_, kStatusInterval) :
                                std::chrono::microseconds(kStatusInterval);
    tick_timer_->expires_after(interval);
    tick_timer_->async_wait([this, &io](const boost::system::error_code& ec) {
      if (ec) return;
      // The rate limiter's summary lines and what passed descriptors wrote, measured first;
      // then finished deletes, a fresh free-space figure, max-age and the byte limits, which
      // so age for what the disk holds now and know which of it descriptors hold (issue 37).
      service_->Tick();
      counter_clock_->Tick();
      service_->store().Tick();
      // A renamed or deleted trace directory is noticed here: a stat every tick costs
      // nothing, where one per request would cost every event two system calls.
      service_->store().CheckTraceDir();
      // While stopping, keep the watchdog fed but leave STATUS=Stopping in place.
      std::string msg = watchdog_ ? "WATCHDOG=1" : "";
      if (!stopping_) msg += (msg.empty() ? "" : "\n") + std::string("STATUS=") + service_->StatusLine();
      if (!msg.empty()) Notify(msg);
      Tick(io);
    });
  }

  // Where a stop is: the grace period's end, and whether the saves past it were answered.
  struct Stopping {
    std::chrono::steady_clock::time_point grace_end;
    bool dropped = false;    // the saves not started were answered -ESHUTDOWN
    bool abandoned = false;  // the saves still being written were too
    std::optional<std::chrono::steady_clock::time_point> flush_end;
  };

  // Polls until every session closed and every save was answered, answering what is left
  // -ESHUTDOWN at the deadlines above, so that no client that asked for a save gets a closed
  // connection for its reply.
  void StopWhenDrained(asio::io_context& io, Listener& listener, asio::steady_timer& timer, Stopping stop) {
    const auto now = std::chrono::steady_clock::now();
    size_t saves = service_->saves_in_flight();
    bool done = listener.sessions() == 0 && saves == 0;
    if (!done && now >= stop.grace_end) {
      if (!stop.dropped) {
        stop.dropped = true;
        if (size_t n = service_->DropQueuedSaves(); n != 0) {
          log_.Warning("stopping: ", n, " save(s) not started in the grace period answered -ESHUTDOWN");
        }
      }
      saves = service_->saves_in_flight();
      if (saves != 0 && now >= stop.grace_end + kSaveGrace && !stop.abandoned) {
        stop.abandoned = true;
        const size_t n = service_->DropQueuedSaves() + service_->AbandonRunningSaves();  // a death's save may be new
        log_.Warning("stopping: ", n, " save(s) still being written answered -ESHUTDOWN; their directories are left incomplete");
        saves = service_->saves_in_flight();
      }
      // The saves answered, their replies get a moment to go out; then whatever is left closes.
      if ((saves == 0 || stop.abandoned) && !stop.flush_end) stop.flush_end = now + kReplyFlush;
      if (stop.flush_end && now >= *stop.flush_end) {
        if (listener.sessions() != 0) log_.Warning("stopping with ", listener.sessions(), " session(s) still busy");
        if (saves != 0) log_.Warning("stopping with ", saves, " save(s) not answered");
        done = true;
      }
    }
    if (done) {
      if (tick_timer_) tick_timer_->cancel();
      io.stop();
      return;
    }
    timer.expires_after(std::chrono::milliseconds(10));
    timer.async_wait([this, &io, &listener, &timer, stop](const boost::system::error_code& ec) {
      if (!ec) StopWhenDrained(io, listener, timer, stop);
    });
  }

  Config config_;
  std::vector<std::string> args_;
  Logger log_{StderrSink(StderrIsJournal())};
  TraceService* service_ = nullptr;
  crash::ProcCrashInspector* crash_inspector_ = nullptr;
  std::optional<std::chrono::microseconds> watchdog_;
  bool stopping_ = false;  // I/O thread only
  std::optional<asio::steady_timer> tick_timer_;
  core::CounterClock* counter_clock_ = nullptr;  // Run's, alive while the ticker runs
};

}  // namespace

int DaemonMain(int argc, const char* const* argv) {
  // The daemon runs itself as the unwinder of a crashed client (ProcCrashInspector).
  if (argc > 1 && std::strcmp(argv[1], crash::kUnwindHelperFlag) == 0) return crash::UnwindHelperMain(argc, argv);
  try {
    ParsedCommandLine cl = ParseCommandLine(argc, argv);
    switch (cl.outcome) {
      case ParsedCommandLine::Outcome::kExitSuccess:
        std::printf("%s\n", cl.output.c_str());
        return 0;
      case ParsedCommandLine::Outcome::kUsageError:
        std::fprintf(stderr, "%s\n", cl.output.c_str());
        return 2;
      case ParsedCommandLine::Outcome::kRun:
        break;
    }
    // A client that disconnects mid-reply must not kill the daemon.
    ::signal(SIGPIPE, SIG_IGN);
    // A held passed file is asked whether anyone writes it by taking a read lease and letting
    // it go at once (posix_file_system.cc); an open for writing in between breaks the lease,
    // and the kernel tells the lease's owner with SIGIO, whose default would end the daemon.
    ::signal(SIGIO, SIG_IGN);
    // Ring saves use buffers of a few hundred KiB, several times a second under load: keep
    // them on the heap and keep the heap, instead of a fresh mmap (and its page faults) and a
    // trim for each one. Bounded: at most 8 MiB of freed heap is kept.
    ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
    ::mallopt(M_TRIM_THRESHOLD, 8 << 20);
    std::vector<std::string> args(argv, argv + argc);
    Daemon daemon(std::move(cl.config), std::move(args));
    return daemon.Run();
  } catch (const std::exception& e) {  // the one top-level catch: report, never die silently
    std::fprintf(stderr, "<2>atraced: fatal: %s\n", e.what());
    return 1;
  }
}

}  // namespace atraced
