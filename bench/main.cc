// atraced_bench: what atraced costs an application, measured side by side against CANN-style
// in-process writing (bench/cann_baseline.h). See docs/BENCHMARKS.md for the method.
//
// Every case runs its sides interleaved, round by round (A, B, C, A, B, C, ... with the order
// rotated each round), so drift on a noisy machine hits every side alike. Each row of the
// table is the median over rounds with the interquartile range and min..max; ratios are
// computed per round (paired) and then summarised.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "atrace_pub.h"
#include "atraced/atrace_client.h"
#include "bench_client.h"
#include "bench_util.h"
#include "cann_baseline.h"
#include "conc_runner.h"
#include "cpu_bench.h"
#include "floor_bench.h"
#include "ping_pong.h"
#include "storm_bench.h"
#include "submit_bench.h"

#ifndef ATRACED_BENCH_DAEMON
#define ATRACED_BENCH_DAEMON "atraced"
#endif
#ifndef ATRACED_BENCH_STORM_CHILD
#define ATRACED_BENCH_STORM_CHILD "atraced_storm_child"
#endif

namespace atraced_bench {
namespace {

// ---- parameters --------------------------------------------------------------------------

struct Params {
  std::string mode = "full";
  int churn_rounds = 21;
  int churn_events = 300;  // events per side per round
  int rtt_iters = 3000;    // ping-pongs per round
  int bulk_rounds = 11;
  size_t bulk_bytes = size_t{64} << 20;
  int conc_rounds = 7;
  int conc_ms = 1500;
  std::vector<int> conc_clients{1, 8, 64};
  int rec_rounds = 7;
  size_t rec_dirs = 100000;
  size_t rec_procs = 100;
  int mem_clients = 1000;
  int submit_rounds = 21;
  int submit_records = 400000;  // per side per round
  int report_rounds = 11;
  int report_calls = 20;        // reports per side per round
  int storm_rounds = 5;
  std::vector<int> storm_processes{16, 64};
  int cpu_rounds = 7;
  int cpu_sync_events = 2000;  // per sync side per round; the concurrent sides use conc_ms
};

Params ForMode(const std::string& mode) {
  Params p;
  p.mode = mode;
  if (mode == "quick") {
    p.churn_rounds = 5;
    p.churn_events = 100;
    p.rtt_iters = 1000;
    p.bulk_rounds = 5;
    p.bulk_bytes = size_t{16} << 20;
    p.conc_rounds = 2;
    p.conc_ms = 300;
    p.rec_rounds = 3;
    p.rec_dirs = 2000;
    p.rec_procs = 10;
    p.submit_rounds = 7;
    p.submit_records = 100000;
    p.report_rounds = 5;
    p.report_calls = 10;
    p.storm_rounds = 3;
    p.cpu_rounds = 3;
    p.cpu_sync_events = 500;
  } else if (mode == "smoke") {
    p.churn_rounds = 2;
    p.churn_events = 5;
    p.rtt_iters = 50;
    p.bulk_rounds = 2;
    p.bulk_bytes = size_t{1} << 20;
    p.conc_rounds = 1;
    p.conc_ms = 100;
    p.rec_rounds = 2;
    p.rec_dirs = 300;
    p.rec_procs = 3;
    p.submit_rounds = 2;
    p.submit_records = 1000;
    p.report_rounds = 2;
    p.report_calls = 2;
    p.storm_rounds = 1;
    p.storm_processes = {4};
    p.cpu_rounds = 1;
    p.cpu_sync_events = 20;
  } else if (mode != "full") {
    Fail("--mode: expected full, quick or smoke, got [" + mode + "]");
  }
  return p;
}

struct Env {
  std::string daemon_binary;
  std::string before_binary;  // the cpu case's other daemon (--before); empty: daemon_binary
  std::string work;  // scratch directory, everything goes below it
  Params p;
};

atrace_event_spec HostEvent() { return atrace_event_spec{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_HOST, 0, nullptr}; }
atrace_file_spec ObjectFile() { return atrace_file_spec{ATRACE_FILE_OBJECT, "hccl", 0, 0, 0, 0, nullptr}; }


atrace_status Status(atrace_client* c) {
  atrace_status s{};
  Check(atrace_client_status(c, &s), "atrace_client_status", c);
  return s;
}

std::unique_ptr<Daemon> StartDaemon(const Env& env, const std::string& name, uint32_t record_num,
                                    int64_t* ready_ns = nullptr, std::vector<std::string> extra = {}) {
  auto d = std::make_unique<Daemon>();
  Daemon::Options o;
  o.binary = env.daemon_binary;
  o.root = env.work + "/" + name + "/root";
  o.socket = env.work + "/" + name + ".sock";
  o.log = env.work + "/" + name + ".log";
  o.record_num = record_num;
  // One bench process makes far more events than a client's default rate limit allows (10000
  // per 30 s): the cases measure the event path, so the limiter is off unless a case turns it
  // on (the retention case does, with a burst no case reaches).
  if (std::find(extra.begin(), extra.end(), "--rate-limit-burst") == extra.end()) o.extra = {"--rate-limit-burst", "0"};
  o.extra.insert(o.extra.end(), extra.begin(), extra.end());
  if (!MakeDirs(o.root)) Fail("mkdir " + o.root + ": " + std::strerror(errno));
  std::string error;
  int64_t t = d->Start(o, &error);
  if (t < 0) Fail("starting atraced (" + name + "): " + error);
  if (ready_ns) *ready_ns = t;
  return d;
}

// Waits (outside any timing) until the daemon has deleted what it aged: at most `kept` event
// directories left on disk.
void SettleDeletes(const Daemon& d, long kept) {
  if (!WaitForEventDirs(d.root() + "/atrace", kept)) Fail("atraced did not finish its deletes within 30 s");
}

Side* Find(std::vector<Side>& sides, const std::string& name) {
  for (auto& s : sides) {
    if (s.name == name) return &s;
  }
  Fail("no side " + name);
}

// ---- case: retention limits ----------------------------------------------------------------

// Churn at record num 10 against two daemons side by side: one with the count alone (budget
// and reserve out of reach, no rate limit), one with every retention limit on (the default
// max-use and keep-free, a rate limiter that counts every event, a per-client byte bound,
// max-age): what the limits cost per event.
void RetentionCase(const Env& env, Table& table) {
  const Params& p = env.p;
  const auto data = Pattern(kEventBytes);
  const atrace_event_spec ev = HostEvent();
  const atrace_file_spec file = ObjectFile();
  struct Setup {
    std::string name;
    std::vector<std::string> args;
    std::unique_ptr<Daemon> daemon;
    ClientPtr client;
  };
  std::vector<Setup> setups;
  setups.push_back({"count", {"--max-use", "100%", "--keep-free", "0"}, nullptr, nullptr});
  setups.push_back({"limits",
                    {"--max-use", "10%", "--keep-free", "15%", "--rate-limit-burst", "1000000000",
                     "--rate-limit-interval", "1s", "--max-bytes-per-client", "1T", "--max-age", "1d"},
                    nullptr, nullptr});
  for (auto& s : setups) {
    s.daemon = StartDaemon(env, "ret-" + s.name, 10, nullptr, s.args);
    s.client.reset(OpenClient(s.daemon->socket()));
    for (int i = 0; i < 10; ++i) {
      Check(atrace_emit(s.client.get(), &ev, &file, data.data(), data.size(), 0, nullptr, 0), "prefill", s.client.get());
    }
  }
  const int n = p.churn_events;
  std::vector<Side> sides;
  for (auto& s : setups) {
    atrace_client* c = s.client.get();
    sides.push_back({s.name, [c, n, &data, &ev, &file] {
                       int64_t t0 = NowNs();
                       for (int i = 0; i < n; ++i) {
                         Check(atrace_emit(c, &ev, &file, data.data(), data.size(), 0, nullptr, 0), "atrace_emit", c);
                       }
                       return static_cast<double>(NowNs() - t0) / 1000.0 / n;
                     }, {}});
  }
  Interleave(sides, p.churn_rounds);
  auto& count = Find(sides, "count")->values;
  auto& limits = Find(sides, "limits")->values;
  table.AddValue("retention.count", "atrace_emit at record num 10, the count limit alone", "us/event", count);
  table.AddValue("retention.limits", "the same with max-use, keep-free, rate limit, byte bound and max-age on",
                 "us/event", limits);
  table.AddValue("retention.vs_count", "time/event with every limit on / with the count alone, per round", "x",
                 Ratios(limits, count), Goal::kAtMost, 1.1);
  for (auto& s : setups) {
    s.client.reset();
    s.daemon->Stop();
  }
}

// ---- case 1: event churn -----------------------------------------------------------------

// Daemons kept for the later cases (bulk, concurrency use the record-number-10 one).
struct SharedDaemons {
  std::unique_ptr<Daemon> d10;
};

void ChurnCase(const Env& env, Table& table, SharedDaemons& shared) {
  const Params& p = env.p;
  const auto data = Pattern(kEventBytes);
  const atrace_event_spec ev = HostEvent();
  const atrace_file_spec file = ObjectFile();

  // First, so the echo process inherits none of the client connections opened below.
  PingPong pp;
  struct PerLimit {
    uint32_t rn;
    std::unique_ptr<Daemon> daemon;
    std::unique_ptr<CannWriter> base;
    ClientPtr stream, fd, async;
  };
  std::vector<PerLimit> limits;
  for (uint32_t rn : {10u, 1000u}) {
    PerLimit l;
    l.rn = rn;
    l.daemon = StartDaemon(env, "d" + std::to_string(rn), rn);
    l.base = std::make_unique<CannWriter>(env.work + "/base" + std::to_string(rn), rn);
    l.stream.reset(OpenClient(l.daemon->socket()));
    l.fd.reset(OpenClient(l.daemon->socket()));
    l.async.reset(OpenClient(l.daemon->socket()));
    // Fill both to the limit, so every measured event also ages one directory.
    for (uint32_t i = 0; i < rn; ++i) {
      Check(atrace_emit(l.stream.get(), &ev, &file, data.data(), data.size(), 0, nullptr, 0), "prefill emit",
            l.stream.get());
      if (int rc = l.base->Emit(data.data(), data.size()); rc != 0) Fail(std::string("baseline prefill: ") + std::strerror(-rc));
    }
    limits.push_back(std::move(l));
  }

  const int n = p.churn_events;
  std::vector<Side> sides;
  auto per_event_us = [n](int64_t t0) { return static_cast<double>(NowNs() - t0) / 1000.0 / n; };
  // After an atraced side, outside its timing: the deletes it caused finish before the next
  // side runs. Without this they ran in the next side's time (often the baseline's).
  auto settle = [](const PerLimit* lp) { SettleDeletes(*lp->daemon, lp->rn); };
  sides.push_back({"rtt", [&] {
                     int64_t t0 = NowNs();
                     pp.Run(p.rtt_iters);
                     return static_cast<double>(NowNs() - t0) / 1000.0 / p.rtt_iters;
                   }, {}});
  for (auto& l : limits) {
    const std::string rn = std::to_string(l.rn);
    PerLimit* lp = &l;
    sides.push_back({"rn" + rn + ".baseline", [lp, n, &data, per_event_us] {
                       int64_t t0 = NowNs();
                       for (int i = 0; i < n; ++i) {
                         if (int rc = lp->base->Emit(data.data(), data.size()); rc != 0) {
                           Fail(std::string("baseline emit: ") + std::strerror(-rc));
                         }
                       }
                       return per_event_us(t0);
                     }, {}});
    sides.push_back({"rn" + rn + ".stream", [lp, n, &data, &ev, &file, per_event_us, settle] {
                       int64_t t0 = NowNs();
                       for (int i = 0; i < n; ++i) {
                         Check(atrace_emit(lp->stream.get(), &ev, &file, data.data(), data.size(), 0, nullptr, 0),
                               "atrace_emit", lp->stream.get());
                       }
                       double us = per_event_us(t0);
                       settle(lp);
                       return us;
                     }, {}});
    sides.push_back({"rn" + rn + ".fd", [lp, n, &data, &ev, &file, per_event_us, settle] {
                       int64_t t0 = NowNs();
                       for (int i = 0; i < n; ++i) {
                         Check(atrace_emit(lp->fd.get(), &ev, &file, data.data(), data.size(), ATRACE_EMIT_VIA_FD,
                                           nullptr, 0),
                               "atrace_emit VIA_FD", lp->fd.get());
                       }
                       double us = per_event_us(t0);
                       settle(lp);
                       return us;
                     }, {}});
    sides.push_back({"rn" + rn + ".async", [lp, n, &data, &ev, &file, per_event_us, settle] {
                       atrace_client* c = lp->async.get();
                       atrace_client_stats before{}, after{};
                       atrace_client_get_stats(c, &before);
                       int64_t t0 = NowNs();
                       for (int i = 0; i < n; ++i) {
                         Check(atrace_emit_async(c, &ev, &file, data.data(), data.size()), "atrace_emit_async", c);
                       }
                       Check(atrace_client_flush(c), "atrace_client_flush (an asynchronous event failed)", c);
                       double us = per_event_us(t0);
                       atrace_client_get_stats(c, &after);
                       if (after.async_failed != before.async_failed || after.async_ok - before.async_ok != uint64_t(n)) {
                         Fail("asynchronous events: " + std::to_string(after.async_ok - before.async_ok) + " ok, " +
                              std::to_string(after.async_failed - before.async_failed) + " failed of " + std::to_string(n));
                       }
                       settle(lp);
                       return us;
                     }, {}});
  }
  Interleave(sides, p.churn_rounds);

  // The store must really be at its limit and aging: check, outside the timing.
  for (auto& l : limits) {
    atrace_status s = Status(l.stream.get());
    if (s.host_dirs != l.rn || s.dirs_aged == 0) {
      Fail("churn: daemon rn=" + std::to_string(l.rn) + " holds " + std::to_string(s.host_dirs) + " host dirs, aged " +
           std::to_string(s.dirs_aged));
    }
    if (l.base->dirs() != l.rn) Fail("churn: baseline holds " + std::to_string(l.base->dirs()) + " dirs");
  }

  const std::string ev_desc = "one event, one 4 KiB file, root at its limit (ages one per event), " +
                              std::to_string(n) + " events/round";
  auto& rtt = Find(sides, "rtt")->values;
  table.AddValue("churn.rtt64", "64-byte ping-pong over a Unix socket pair between two processes, " +
                                    std::to_string(p.rtt_iters) + "/round", "us", rtt);
  for (auto& l : limits) {
    const std::string rn = std::to_string(l.rn);
    auto& base = Find(sides, "rn" + rn + ".baseline")->values;
    auto& stream = Find(sides, "rn" + rn + ".stream")->values;
    auto& fd = Find(sides, "rn" + rn + ".fd")->values;
    auto& async = Find(sides, "rn" + rn + ".async")->values;
    table.AddValue("churn.rn" + rn + ".baseline", "CANN-style in-process: " + ev_desc + ", record num " + rn,
                   "us/event", base);
    table.AddValue("churn.rn" + rn + ".stream", "atrace_emit (1 round trip), record num " + rn, "us/event", stream);
    table.AddValue("churn.rn" + rn + ".fd", "atrace_emit VIA_FD (2 round trips), record num " + rn, "us/event", fd);
    table.AddValue("churn.rn" + rn + ".async", "atrace_emit_async, 64 in flight, flush per round, record num " + rn,
                   "us/event", async);
    // Synchronous limit: 1 / (baseline + one round trip); ratio = our rate / that limit.
    auto limit_us = Sum(base, rtt);
    table.AddValue("churn.rn" + rn + ".stream.vs_limit",
                   "events/s of atrace_emit / (1 / (baseline + rtt)), per round", "x", Ratios(limit_us, stream),
                   Goal::kAtLeast, 0.85);
    table.AddValue("churn.rn" + rn + ".fd.vs_limit",
                   "events/s of atrace_emit VIA_FD / (1 / (baseline + rtt)), per round", "x", Ratios(limit_us, fd),
                   Goal::kAtLeast, 0.85);
    table.AddValue("churn.rn" + rn + ".async.vs_baseline", "events/s of atrace_emit_async / baseline events/s",
                   "x", Ratios(base, async), Goal::kAtLeast, 0.9);
  }
  for (const char* side : {"baseline", "stream", "fd", "async"}) {
    auto& t10 = Find(sides, std::string("rn10.") + side)->values;
    auto& t1000 = Find(sides, std::string("rn1000.") + side)->values;
    table.AddValue(std::string("churn.aging.") + side,
                   std::string("time/event at record num 1000 / at 10, ") + side + ", per round", "x",
                   Ratios(t1000, t10), Goal::kAtMost, 1.2);
  }

  for (auto& l : limits) {
    l.stream.reset();
    l.fd.reset();
    l.async.reset();
    if (l.rn == 10) {
      shared.d10 = std::move(l.daemon);
    } else {
      l.daemon->Stop();
    }
  }
}

// ---- case 2: bulk write ----------------------------------------------------------------

void BulkCase(const Env& env, Table& table, SharedDaemons& shared) {
  const Params& p = env.p;
  if (!shared.d10) shared.d10 = StartDaemon(env, "d10", 10);
  const auto chunk = Pattern(kBulkChunk);
  const size_t chunks = p.bulk_bytes / kBulkChunk;
  const double mib = static_cast<double>(chunks * kBulkChunk) / (1 << 20);
  const std::string base_dir = env.work + "/bulk-base";
  MakeDirs(base_dir);
  ClientPtr c(OpenClient(shared.d10->socket()));
  const atrace_event_spec ev = HostEvent();
  const atrace_file_spec fspec = ObjectFile();
  int round = 0;

  std::vector<Side> sides;
  sides.push_back({"baseline", [&] {
                     return DirectAppendMiBps(base_dir + "/bulk_" + std::to_string(round++) + ".txt", chunk, chunks);
                   }, {}});
  auto atraced_side = [&](bool via_fd) {
    atrace_event* e = nullptr;
    Check(atrace_event_begin(c.get(), &ev, &e), "atrace_event_begin", c.get());
    atrace_file* f = nullptr;
    Check(atrace_file_open(e, &fspec, &f), "atrace_file_open", c.get());
    std::string path = atrace_file_path(f);
    int64_t t0 = NowNs();
    if (via_fd) {
      int fd = -1;
      Check(atrace_file_get_fd(f, &fd), "atrace_file_get_fd", c.get());
    }
    for (size_t i = 0; i < chunks; ++i) Check(atrace_file_write(f, chunk.data(), kBulkChunk), "atrace_file_write", c.get());
    int64_t t1 = NowNs();
    uint64_t size = 0;
    Check(atrace_file_close(f, &size), "atrace_file_close", c.get());
    Check(atrace_event_end(e, nullptr), "atrace_event_end", c.get());
    if (size != chunks * kBulkChunk) Fail("bulk: file size " + std::to_string(size));
    // Drop the data now (outside the timing), as the baseline's unlink does, so dirty pages
    // of old rounds do not pile up and write back during later rounds.
    if (::truncate(path.c_str(), 0) != 0) Fail("truncate " + path + ": " + std::strerror(errno));
    return mib / (static_cast<double>(t1 - t0) / 1e9);
  };
  sides.push_back({"stream", [&] { return atraced_side(false); }, {}});
  sides.push_back({"fd", [&] { return atraced_side(true); }, {}});
  Interleave(sides, p.bulk_rounds);

  auto& base = Find(sides, "baseline")->values;
  auto& stream = Find(sides, "stream")->values;
  auto& fd = Find(sides, "fd")->values;
  const std::string sz = std::to_string(chunks * kBulkChunk >> 20) + " MiB/round in 64 KiB appends, one file";
  table.AddValue("bulk.baseline", "CANN-style write() to an O_APPEND file (page cache), " + sz, "MiB/s", base);
  table.AddValue("bulk.stream", "atrace_file_write without fd (FILE_APPEND, 1 round trip each), " + sz, "MiB/s", stream);
  table.AddValue("bulk.fd", "atrace_file_get_fd, then atrace_file_write through it, " + sz, "MiB/s", fd);
  table.AddValue("bulk.stream.vs_baseline", "write rate streaming / baseline, per round", "x", Ratios(stream, base),
                 Goal::kAtLeast, 0.8);
  table.AddValue("bulk.fd.vs_baseline", "write rate fd passing / baseline, per round", "x", Ratios(fd, base),
                 Goal::kAtLeast, 0.95);
  RemoveTree(base_dir);
}

// ---- case 3: concurrency --------------------------------------------------------------

// How each client process makes its events.
enum class ConcWay {
  kBaseline,  // CANN-style in the process (the event directory's mkdir timed)
  kStepwise,  // atrace_event_begin, atrace_file_open, atrace_file_write, atrace_event_end: four
              // round trips, each call waits for its reply as the API says (begin timed)
  kEmit,      // atrace_emit: the whole event in one round trip (the call timed)
};

const char* ConcWayName(ConcWay way) {
  switch (way) {
    case ConcWay::kBaseline: return "baseline";
    case ConcWay::kStepwise: return "atraced";
    case ConcWay::kEmit: return "atraced emit";
  }
  return "?";
}

// Runs `clients` processes doing event churn for `ms`, in the given way.
ConcResult RunConcurrent(const Env& env, const Daemon& daemon, int clients, ConcWay way) {
  const bool baseline = way == ConcWay::kBaseline;
  const std::string& socket = daemon.socket();
  const std::string base_root = env.work + "/conc-base";
  ConcSetup setup;
  if (baseline) {
    setup = [&base_root] { return CannProcessStep(base_root); };
  } else {
    setup = [&socket, way]() -> ConcStep {
      auto data = std::make_shared<const std::vector<uint8_t>>(Pattern(kEventBytes));
      auto c = std::make_shared<ClientPtr>(OpenClient(socket));
      return [c, data, way]() -> uint32_t {
        const atrace_event_spec ev = HostEvent();
        const atrace_file_spec fspec = ObjectFile();
        const int64_t t0 = NowNs();
        if (way == ConcWay::kEmit) {
          int rc = atrace_emit(c->get(), &ev, &fspec, data->data(), data->size(), 0, nullptr, 0);
          const int64_t t1 = NowNs();
          if (rc != 0) Fail(std::string("atrace_emit: ") + atrace_client_strerror(rc));
          return static_cast<uint32_t>(t1 - t0);
        }
        atrace_event* e = nullptr;
        int rc = atrace_event_begin(c->get(), &ev, &e);
        const int64_t t1 = NowNs();
        if (rc != 0) Fail(std::string("atrace_event_begin: ") + atrace_client_strerror(rc));
        atrace_file* f = nullptr;
        rc = atrace_file_open(e, &fspec, &f);
        if (rc == 0) rc = atrace_file_write(f, data->data(), data->size());
        int rc2 = atrace_event_end(e, nullptr);  // closes the file with the event
        if (rc != 0 || rc2 != 0) Fail(std::string("event: ") + atrace_client_strerror(rc != 0 ? rc : rc2));
        return static_cast<uint32_t>(t1 - t0);
      };
    };
  }
  ConcResult r = RunProcesses(clients, env.p.conc_ms, setup);
  if (baseline) RemoveTree(base_root);
  if (!baseline) SettleDeletes(daemon, 10);  // record num 10
  if (!r.error.empty()) Fail("concurrency (" + std::to_string(clients) + " " + ConcWayName(way) + "): " + r.error);
  return r;
}

void ConcurrencyCase(const Env& env, Table& table, SharedDaemons& shared) {
  const Params& p = env.p;
  if (!shared.d10) shared.d10 = StartDaemon(env, "d10", 10);
  const Daemon* daemon = shared.d10.get();
  std::vector<ConcSeries> ours(p.conc_clients.size()), base(p.conc_clients.size()), emit(p.conc_clients.size());
  std::vector<Side> sides;
  for (size_t i = 0; i < p.conc_clients.size(); ++i) {
    int n = p.conc_clients[i];
    for (ConcWay way : {ConcWay::kStepwise, ConcWay::kBaseline, ConcWay::kEmit}) {
      ConcSeries* s = way == ConcWay::kBaseline ? &base[i] : way == ConcWay::kEmit ? &emit[i] : &ours[i];
      sides.push_back({std::string(ConcWayName(way)) + std::to_string(n), [&env, daemon, n, way, s] {
                         ConcResult r = RunConcurrent(env, *daemon, n, way);
                         return s->Add(r);
                       }, {}});
    }
  }
  Interleave(sides, p.conc_rounds);
  for (auto* v : {&ours, &base, &emit}) {
    for (auto& s : *v) s.DropWarmup();
  }
  const std::string dur = std::to_string(p.conc_ms) + " ms/run";
  size_t one = 0, last = p.conc_clients.size() - 1;
  for (size_t i = 0; i < p.conc_clients.size(); ++i) {
    const std::string n = std::to_string(p.conc_clients[i]);
    const std::string id = "conc.c" + n;
    table.AddValue(id + ".throughput", n + " client processes: begin+open+write 4 KiB+end, events/s of all, " + dur,
                   "events/s", ours[i].eps);
    table.AddValue(id + ".begin_p50", n + " clients: atrace_event_begin round trip, p50 of the run", "us", ours[i].p50);
    table.AddValue(id + ".begin_p99", n + " clients: atrace_event_begin round trip, p99 of the run", "us", ours[i].p99);
    table.AddValue(id + ".baseline_throughput", n + " processes, CANN-style in-process churn (each its own limit 10)",
                   "events/s", base[i].eps);
    table.AddValue(id + ".baseline_mkdir_p99", n + " processes, CANN-style: time+mkdir of the event dir, p99", "us",
                   base[i].p99);
    table.AddValue(id + ".vs_baseline", "throughput atraced / CANN-style at " + n + " processes, per round", "x",
                   Ratios(ours[i].eps, base[i].eps));
    // The same events made with atrace_emit: one round trip each instead of four.
    table.AddValue(id + ".emit.throughput", n + " client processes: atrace_emit of one 4 KiB file, events/s of all, " + dur,
                   "events/s", emit[i].eps);
    table.AddValue(id + ".emit.p99", n + " clients: atrace_emit round trip, p99 of the run", "us", emit[i].p99);
    table.AddValue(id + ".emit.vs_baseline", "throughput atrace_emit / CANN-style at " + n + " processes, per round",
                   "x", Ratios(emit[i].eps, base[i].eps));
  }
  if (p.conc_clients[one] == 1 && p.conc_clients[last] == 64) {
    table.AddValue("conc.c64.p99_vs_c1_p50", "begin p99 at 64 clients / begin p50 at 1 client, per round", "x",
                   Ratios(ours[last].p99, ours[one].p50), Goal::kAtMost, 10);
  }
}

// ---- case: AtraceEventReportSync of a full ring ------------------------------------------

void ReportCase(const Env& env, Table& table) {
  const Params& p = env.p;
  constexpr uint32_t kMsgNum = 1024, kMsgSize = 112;  // CANN's default ring, full
  Daemon d;
  Daemon::Options o;
  o.binary = env.daemon_binary;
  o.root = env.work + "/report/root";
  o.socket = env.work + "/report.sock";
  o.log = env.work + "/report.log";
  o.record_num = 1000;  // every report of the run is kept: the save is measured, not aging
  std::string error;
  if (d.Start(o, &error) < 0) Fail("report daemon: " + error);
  ::setenv("ATRACED_SOCKET", o.socket.c_str(), 1);
  const TraHandle h = AtraceCreate(TRACER_TYPE_SCHEDULE, "bench_report");
  const TraEventHandle ev = AtraceEventCreate("bench_report_event");
  if (h < 0 || ev < 0 || AtraceEventBindTrace(ev, h) != TRACE_SUCCESS) Fail("report: cannot create the object");
  for (uint32_t i = 0; i < kMsgNum; ++i) {
    std::string text = "CqReport:devId=0,stmId=" + std::to_string(i) + ",";
    text.resize(kMsgSize - 1, 'x');
    if (AtraceSubmit(h, text.data(), static_cast<uint32_t>(text.size())) != TRACE_SUCCESS) Fail("report: submit");
  }
  InProcessSave baseline(env.work + "/report/inproc", kMsgNum, kMsgSize);
  PingPong pp;
  const int calls = p.report_calls;
  std::vector<Side> sides{
      {"inproc", [&] {
         const int64_t t0 = NowNs();
         for (int i = 0; i < calls; ++i) baseline.Save();
         return static_cast<double>(NowNs() - t0) / 1000.0 / calls;
       }, {}},
      {"atraced", [&] {
         const int64_t t0 = NowNs();
         for (int i = 0; i < calls; ++i) {
           if (AtraceEventReportSync(ev) != TRACE_SUCCESS) Fail("report: AtraceEventReportSync failed");
         }
         return static_cast<double>(NowNs() - t0) / 1000.0 / calls;
       }, {}},
      {"rtt", [&] {
         const int64_t t0 = NowNs();
         pp.Run(p.rtt_iters);
         return static_cast<double>(NowNs() - t0) / 1000.0 / p.rtt_iters;
       }, {}},
  };
  Interleave(sides, p.report_rounds);
  AtraceEventDestroy(ev);
  AtraceDestroy(h);
  d.Stop();
  std::vector<double> limit;
  for (size_t i = 0; i < sides[0].values.size(); ++i) limit.push_back(sides[0].values[i] + sides[2].values[i]);
  const std::string what = "one object, full default ring (1024 x 112 B), " + std::to_string(calls) + " saves/round";
  table.AddValue("report.inproc", "CANN-style in-process save (format, mkdir, open, write, close): " + what,
                 "us/save", sides[0].values);
  table.AddValue("report.atraced", "AtraceEventReportSync through atraced: " + what, "us/save", sides[1].values);
  table.AddValue("report.vs_limit", "AtraceEventReportSync / (in-process save + one round trip), per round", "x",
                 Ratios(sides[1].values, limit), Goal::kAtMost, 1.0);
}

// ---- case 4: recovery ---------------------------------------------------------------------

struct Tree {
  std::string root;  // trace root (holds atrace/)
  size_t dirs = 0, schedule = 0, procs = 0, entries = 0;
};

Tree MakeTree(const std::string& root, size_t dirs, size_t procs) {
  Tree t;
  t.root = root;
  t.dirs = dirs;
  t.procs = procs;
  t.schedule = std::min<size_t>(1000, dirs / 10);
  const std::string trace = root + "/atrace";
  if (!MakeDirs(trace)) Fail("mkdir " + trace);
  const int64_t base_us = 1700000000LL * 1000000;  // 2023-11-14, formatted in UTC: always valid
  const uint32_t uid = ::geteuid();
  std::vector<std::string> pdirs, pnames;
  for (size_t k = 0; k < procs; ++k) {
    int pid = 100000 + static_cast<int>(k);
    std::string name = "trace_" + std::to_string(pid) + "_" + std::to_string(pid) + "_" +
                       TraceTimeAt(base_us + static_cast<int64_t>(k) * 1000000, true);
    std::string pd = trace + "/" + name;
    if (::mkdir(pd.c_str(), 0750) != 0) Fail("mkdir " + pd + ": " + std::strerror(errno));
    pdirs.push_back(pd);
    pnames.push_back(name);
  }
  // The daemon's order log, as it writes it: one '+' record per directory, oldest first.
  std::string log = "# atraced order log 1\n";
  for (size_t i = 0; i < dirs; ++i) {
    size_t k = i % procs;
    int pid = 100000 + static_cast<int>(k);
    bool sched = i < t.schedule;  // the oldest ones: exactly the record number, nothing to age
    int64_t us = base_us + static_cast<int64_t>(i) * 1000;
    std::string en = std::string(sched ? "schedule" : "exit") + "_event_" + std::to_string(pid) + "_" +
                     TraceTimeAt(us, true);
    std::string ed = pdirs[k] + "/" + en;
    if (::mkdir(ed.c_str(), 0750) != 0) Fail("mkdir " + ed + ": " + std::strerror(errno));
    log += "+ " + std::to_string(i + 1) + (sched ? " h 0 " : " e 0 ") + std::to_string(uid) + " " +
           std::to_string(us) + " " + pnames[k] + "/" + en + "\n";
    std::string f = ed + "/schedule_tracer_hccl.txt";
    int fd = ::open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0640);
    if (fd < 0) Fail("create " + f + ": " + std::strerror(errno));
    ::close(fd);
  }
  const std::string log_path = trace + "/.atraced_order";
  int fd = ::open(log_path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0640);
  if (fd < 0 || ::write(fd, log.data(), log.size()) != static_cast<ssize_t>(log.size())) Fail("write " + log_path);
  ::close(fd);
  ::sync();
  t.entries = 1 + 1 + procs + dirs * 2;  // what find -maxdepth 3 prints (the order log too)
  return t;
}

// `find <root>/atrace -maxdepth 3 | wc -l`, timed from fork to exit; returns ns.
int64_t TimedWalk(const Tree& t) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) Fail("pipe");
  std::string dir = t.root + "/atrace";
  int64_t t0 = NowNs();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::execl("/bin/sh", "sh", "-c", "find \"$0\" -maxdepth 3 | wc -l", dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  int64_t t1 = NowNs();
  ::close(out[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Fail("find failed");
  // Once the daemon has run on the tree it leaves its own files beside the order log (the
  // root lock, the aged-directory log): counted here, outside the timing, as the walk
  // sees them.
  size_t own = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind(".atraced_", 0) == 0 && name != ".atraced_order") ++own;
    }
    ::closedir(d);
  }
  if (std::strtoull(Trim(text).c_str(), nullptr, 10) != t.entries + own) {
    Fail("walk saw " + Trim(text) + " entries, expected " + std::to_string(t.entries) + " + " + std::to_string(own) +
         " of the daemon's own");
  }
  return t1 - t0;
}

// One tree: `dirs` event dirs in `procs` process dirs, rows named `prefix`.*.
void RecoveryTreeCase(const Env& env, Table& table, const std::string& prefix, size_t dirs, size_t procs) {
  const Params& p = env.p;
  const std::string root = env.work + "/recovery/root";
  int64_t c0 = NowNs();
  Tree t = MakeTree(root, dirs, procs);
  double make_s = static_cast<double>(NowNs() - c0) / 1e9;
  const uint32_t rn = static_cast<uint32_t>(std::max<size_t>(10, t.schedule));
  bool verified = false;
  int early_sigterm = 0;
  auto daemon_side = [&] {
    Daemon d;
    Daemon::Options o;
    o.binary = env.daemon_binary;
    o.root = root;
    o.socket = env.work + "/recovery.sock";
    o.log = env.work + "/recovery.log";
    o.record_num = rn;
    // The tree is mostly exit dirs: keep them all, so recovery is measured, not aging.
    o.extra = {"--exit-record-num", "100000"};
    std::string error;
    int64_t ns = d.Start(o, &error);
    if (ns < 0) Fail("recovery daemon: " + error);
    if (!verified) {  // once, outside the timing: everything recovered, nothing aged
      ClientPtr c(OpenClient(o.socket));
      atrace_status s = Status(c.get());
      if (s.host_dirs != t.schedule || s.exit_dirs != t.dirs - t.schedule || s.dirs_aged != 0) {
        Fail("recovery: daemon reports host " + std::to_string(s.host_dirs) + ", exit " + std::to_string(s.exit_dirs) +
             ", aged " + std::to_string(s.dirs_aged) + "; expected " + std::to_string(t.schedule) + ", " +
             std::to_string(t.dirs - t.schedule) + ", 0");
      }
      verified = true;
    }
    // 128+SIGTERM: the signal came before the daemon installed its handler, which it does
    // only after the socket accepts (see docs/BENCHMARKS.md); counted, not fatal here.
    int rc = d.Stop();
    if (rc == 128 + SIGTERM) {
      ++early_sigterm;
    } else if (rc != 0) {
      Fail("recovery daemon did not stop cleanly (" + std::to_string(rc) + "); log tail:\n" + ReadFileTail(o.log, 2000));
    }
    return static_cast<double>(ns) / 1e6;
  };
  std::vector<Side> sides;
  sides.push_back({"walk", [&] { return static_cast<double>(TimedWalk(t)) / 1e6; }, {}});
  sides.push_back({"daemon", daemon_side, {}});
  Interleave(sides, p.rec_rounds);
  auto& walk = Find(sides, "walk")->values;
  auto& daemon = Find(sides, "daemon")->values;
  char desc[200];
  std::snprintf(desc, sizeof desc, "%zu event dirs (%zu schedule at record num %u + %zu exit) in %zu process dirs",
                t.dirs, t.schedule, rn, t.dirs - t.schedule, t.procs);
  table.AddValue(prefix + ".walk", std::string("find <root>/atrace -maxdepth 3 | wc -l (fork to exit), warm, ") + desc,
                 "ms", walk);
  table.AddValue(prefix + ".daemon",
                 std::string("atraced fork/exec until the socket accepts (recovery done), warm, ") + desc, "ms", daemon);
  table.AddValue(prefix + ".daemon.vs_walk", "time to ready / walk, per round", "x", Ratios(daemon, walk),
                 Goal::kAtMost, 1.5);
  std::printf("# %s tree of %zu event dirs in %zu process dirs built in %.1f s", prefix.c_str(), t.dirs, t.procs,
              make_s);
  if (early_sigterm) std::printf("; %d daemon(s) killed by SIGTERM sent right after ready (no handler yet)", early_sigterm);
  std::printf("\n");
  RemoveTree(env.work + "/recovery");
}

// Two trees of the same number of event dirs: a few long-lived processes with many events
// each, and a crash-looping program's, one process dir per event (where the per-process-dir
// work of recovery, the read grant's check among it, counts most).
void RecoveryCase(const Env& env, Table& table) {
  RecoveryTreeCase(env, table, "recovery", env.p.rec_dirs, env.p.rec_procs);
  RecoveryTreeCase(env, table, "recovery.wide", env.p.rec_dirs, env.p.rec_dirs);
}

// ---- case 5: memory ------------------------------------------------------------------------

std::vector<double> RssSamplesMiB(const Daemon& d) {
  std::vector<double> v;
  for (int i = 0; i < 5; ++i) {
    ::usleep(50000);
    long kib = d.RssKiB();
    if (kib < 0) Fail("cannot read VmRSS of the daemon");
    v.push_back(static_cast<double>(kib) / 1024.0);
  }
  return v;
}

void MemoryCase(const Env& env, Table& table, SharedDaemons& shared) {
  const Params& p = env.p;
  unsigned long nofile = RaiseNofile();
  int clients = p.mem_clients;
  if (nofile < static_cast<unsigned long>(clients) + 64) clients = static_cast<int>(nofile) - 64;
  auto d = StartDaemon(env, "mem", 10);
  ::usleep(200000);
  auto idle = RssSamplesMiB(*d);
  std::vector<ClientPtr> handles;
  for (int i = 0; i < clients; ++i) handles.emplace_back(OpenClient(d->socket()));
  {
    ClientPtr probe(OpenClient(d->socket()));
    atrace_status s = Status(probe.get());
    if (s.clients < static_cast<uint32_t>(clients)) Fail("memory: daemon sees " + std::to_string(s.clients) + " clients");
  }
  auto with = RssSamplesMiB(*d);
  handles.clear();
  std::vector<double> per_client;
  for (size_t i = 0; i < with.size() && i < idle.size(); ++i) {
    per_client.push_back((with[i] - idle[i]) * 1024.0 / clients);
  }
  table.AddValue("memory.idle", "atraced VmRSS idle (fresh, record num 10, no clients)", "MiB", idle, Goal::kAtMost, 8);
  table.AddValue("memory.clients", "atraced VmRSS with " + std::to_string(clients) + " connected idle clients (HELLO done)",
                 "MiB", with, Goal::kAtMost, 64);
  table.AddValue("memory.per_client", "(RSS with clients - idle) / clients", "KiB", per_client);
  if (shared.d10) {
    std::vector<double> after;
    for (int i = 0; i < 3; ++i) after.push_back(static_cast<double>(shared.d10->RssKiB()) / 1024.0);
    table.AddValue("memory.after_load", "VmRSS of the record-num-10 daemon after the churn/bulk/concurrency cases", "MiB",
                   after);
  }
  d->Stop();
}

// ---- case: the floor (the null daemon) ----------------------------------------------------

// The churn, bulk and concurrency counts, so the floor rows run the same work as the rows
// they bound.
FloorParams FloorParamsOf(const Env& env) {
  FloorParams f;
  f.work = env.work;
  f.sync_rounds = env.p.churn_rounds;
  f.sync_events = env.p.churn_events;
  f.rtt_iters = env.p.rtt_iters;
  f.bulk_rounds = env.p.bulk_rounds;
  f.bulk_bytes = env.p.bulk_bytes;
  f.conc_rounds = env.p.conc_rounds;
  f.conc_ms = env.p.conc_ms;
  f.conc_clients = env.p.conc_clients;
  return f;
}

// ---- main ------------------------------------------------------------------------------

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: atraced_bench [--mode full|quick|smoke] [--quick] [--only CASES] [--atraced PATH]\n"
               "                     [--before PATH] [--dir DIR] [--keep] [--rounds N] [--recovery-dirs N]\n"
               "                     [--storm-workers N,N,...]\n"
               "  CASES: comma-separated of churn,retention,bulk,conc,floor,recovery,memory,submit,report,storm,cpu\n"
               "         (default: all)\n"
               "  --before: the cpu case runs its workloads against --atraced and this daemon alternately,\n"
               "            and the storm case runs this daemon as one more side (default: --atraced itself)\n"
               "  --dir: scratch directory (default: a new one under $TMPDIR or /tmp, removed at the end)\n"
               "  --storm-workers: the --io-workers of the storm's daemons, one side each (default: 1,2)\n");
}

int Main(int argc, char** argv) {
  std::string mode = "full", only, dir, daemon = ATRACED_BENCH_DAEMON, before;
  int rounds = 0;
  long rec_dirs = 0;
  bool keep = false;
  std::vector<int> storm_workers{1, 2};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mode") {
      mode = value();
    } else if (a == "--quick") {
      mode = "quick";
    } else if (a == "--smoke") {
      mode = "smoke";
    } else if (a == "--only") {
      only = value();
    } else if (a == "--atraced") {
      daemon = value();
    } else if (a == "--before") {
      before = value();
    } else if (a == "--dir") {
      dir = value();
    } else if (a == "--keep") {
      keep = true;
    } else if (a == "--rounds") {
      rounds = std::atoi(value().c_str());
    } else if (a == "--recovery-dirs") {
      rec_dirs = std::atol(value().c_str());
    } else if (a == "--storm-workers") {
      // The pool sizes the storm sweeps, one daemon each: "1,2,4,8,16" on a host with the cores.
      const std::string list = value();
      storm_workers.clear();
      for (size_t pos = 0; pos < list.size();) {
        size_t end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        const int w = std::atoi(list.substr(pos, end - pos).c_str());
        if (w < 1 || w > 64) Fail("--storm-workers: each count must be 1..64: " + list);
        storm_workers.push_back(w);
        pos = end + 1;
      }
      if (storm_workers.empty()) Fail("--storm-workers: no count given");
    } else if (a == "-h" || a == "--help") {
      Usage(stdout);
      return 0;
    } else {
      Usage(stderr);
      return 2;
    }
  }
  Env env;
  env.p = ForMode(mode);
  if (rounds > 0) {
    for (int* r : {&env.p.churn_rounds, &env.p.bulk_rounds, &env.p.conc_rounds, &env.p.rec_rounds, &env.p.cpu_rounds, &env.p.storm_rounds, &env.p.report_rounds}) *r = rounds;
  }
  if (rec_dirs > 0) env.p.rec_dirs = static_cast<size_t>(rec_dirs);
  env.daemon_binary = daemon;
  if (::access(daemon.c_str(), X_OK) != 0) Fail("atraced binary not executable: " + daemon + " (use --atraced PATH)");
  env.before_binary = before.empty() ? daemon : before;
  if (::access(env.before_binary.c_str(), X_OK) != 0) Fail("--before: not executable: " + env.before_binary);
  std::set<std::string> cases;
  for (size_t pos = 0; pos < only.size();) {
    size_t end = only.find(',', pos);
    if (end == std::string::npos) end = only.size();
    cases.insert(only.substr(pos, end - pos));
    pos = end + 1;
  }
  for (const auto& c : cases) {
    static const std::set<std::string> known{"churn", "retention", "bulk", "conc", "floor",
                                                "recovery", "memory", "submit", "report", "storm", "cpu"};
    if (!known.count(c)) Fail("--only: unknown case [" + c + "]");
  }
  auto want = [&](const char* c) { return cases.empty() || cases.count(c) > 0; };

  bool made_dir = false;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/atraced-bench.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) Fail("mkdtemp " + tmpl + ": " + std::strerror(errno));
    dir = tmpl;
    made_dir = true;
  } else if (!MakeDirs(dir)) {
    Fail("mkdir " + dir);
  }
  env.work = dir;
  if (env.work.size() + 16 > 107) Fail("--dir too long for socket paths: " + env.work);
  RaiseNofile();

  std::printf("# atraced_bench, mode %s: %s\n", env.p.mode.c_str(), MachineLine(env.work).c_str());
  std::printf("# daemon %s; scratch %s; load average at start %s\n", daemon.c_str(), env.work.c_str(),
              LoadAverage().c_str());
  std::fflush(stdout);

  Table table;
  SharedDaemons shared;
  auto stage = [&](const char* name, const std::function<void()>& fn) {
    int64_t t0 = NowNs();
    fn();
    std::printf("# %s done in %.1f s (load %s)\n", name, static_cast<double>(NowNs() - t0) / 1e9, LoadAverage().c_str());
    std::fflush(stdout);
  };
  int status = 0;
  try {
    if (want("churn")) stage("churn", [&] { ChurnCase(env, table, shared); });
    if (want("retention")) stage("retention", [&] { RetentionCase(env, table); });
    if (want("bulk")) stage("bulk", [&] { BulkCase(env, table, shared); });
    if (want("conc")) stage("concurrency", [&] { ConcurrencyCase(env, table, shared); });
    if (want("floor")) {
      stage("floor", [&] {
        if (!shared.d10) shared.d10 = StartDaemon(env, "d10", 10);
        // Opened at the first event, after the floor case has forked its children, so none
        // of them holds a copy of this connection.
        ClientPtr client;
        const auto data = Pattern(kEventBytes);
        const atrace_event_spec ev = HostEvent();
        const atrace_file_spec file = ObjectFile();
        FloorParams f = FloorParamsOf(env);
        f.atraced_emit = [&] {
          if (!client) client.reset(OpenClient(shared.d10->socket()));
          Check(atrace_emit(client.get(), &ev, &file, data.data(), data.size(), 0, nullptr, 0), "atrace_emit", client.get());
        };
        f.atraced_settle = [&] { SettleDeletes(*shared.d10, 10); };
        FloorCase(f, table);
      });
    }
    if (want("memory")) stage("memory", [&] { MemoryCase(env, table, shared); });
    if (shared.d10) shared.d10->Stop();
    if (want("recovery")) stage("recovery", [&] { RecoveryCase(env, table); });
    if (want("submit")) stage("submit", [&] { SubmitCase(env.p.submit_rounds, env.p.submit_records, table); });
    if (want("report")) stage("report", [&] { ReportCase(env, table); });
    if (want("storm")) {
      stage("storm", [&] {
        StormParams sp;
        sp.daemon_binary = env.daemon_binary;
        sp.child_binary = ATRACED_BENCH_STORM_CHILD;
        sp.work = env.work;
        sp.rounds = env.p.storm_rounds;
        sp.processes = env.p.storm_processes;
        if (env.before_binary != env.daemon_binary) sp.before_binary = env.before_binary;
        sp.workers = storm_workers;
        StormCase(sp, table);
      });
    }
    if (want("cpu")) {
      stage("cpu", [&] {
        CpuParams cp;
        cp.work = env.work;
        cp.after_binary = env.daemon_binary;
        cp.before_binary = env.before_binary;
        cp.rounds = env.p.cpu_rounds;
        cp.sync_events = env.p.cpu_sync_events;
        cp.conc_ms = env.p.conc_ms;
        cp.clients = {8, 64};
        CpuCase(cp, table);
      });
    }
  } catch (const BenchError& e) {
    std::fprintf(stderr, "\natraced_bench: %s\n", e.what());
    status = 1;
  }
  shared.d10.reset();
  std::printf("# load average at end %s\n", LoadAverage().c_str());
  std::printf("\n");
  int missed = table.Print(stdout);
  std::printf("# targets missed: %d\n", missed);
  std::printf("# end of table\n");
  if (made_dir && !keep && status == 0) RemoveTree(env.work);
  if (status != 0) std::fprintf(stderr, "atraced_bench: scratch directory kept for inspection: %s\n", env.work.c_str());
  return status;
}

}  // namespace
}  // namespace atraced_bench

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  try {
    return atraced_bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "atraced_bench: %s\n", e.what());
    return 1;
  }
}
