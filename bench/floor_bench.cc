#include "floor_bench.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "cann_baseline.h"
#include "conc_runner.h"
#include "null_daemon.h"
#include "ping_pong.h"

namespace atraced_bench {
namespace {

double UsPer(int64_t t0, int n) { return static_cast<double>(NowNs() - t0) / 1000.0 / n; }

// A null daemon and the ids its rows take: "floor" (the single-threaded one, the ids the
// rows have always had), "floor.mt1" and "floor.mt" (the multi-threaded one with 1 and with
// AllowedCpus() workers).
struct Target {
  std::string id;
  std::string name;  // for the rows' descriptions
  NullDaemon* nd;
};

// Event directories under every root the daemon's writers use, each checked to hold 0 or
// `limit` (a writer that got events is at its limit); returns the sum.
long ServerEventDirs(const NullDaemon& nd, long limit) {
  long sum = 0;
  for (const auto& root : nd.event_roots()) {
    const long got = CountEventDirs(root + "/atrace");
    if (got != 0 && got != limit) Fail("floor: a null daemon's root " + root + " holds " + std::to_string(got) + " event dirs");
    sum += got;
  }
  return sum;
}

// Synchronous events, one at a time, against the churn case's limit: 1 / (the direct
// writer's event + one round trip), all measured in the same rounds, for every null daemon.
void SyncRows(const FloorParams& p, const std::vector<Target>& targets, PingPong& pp, Table& table) {
  const auto data = Pattern(kEventBytes);
  CannWriter base(p.work + "/floor/base", 10);
  std::vector<std::unique_ptr<NullClient>> clients;
  for (const auto& t : targets) clients.push_back(std::make_unique<NullClient>(t.nd->socket()));
  NullClient& c = *clients[0];  // the single-threaded null daemon's: its ping is the floor.ping row
  // All to their limit first, so every measured event also ages one directory.
  for (int i = 0; i < 10; ++i) {
    if (int rc = base.Emit(data.data(), data.size()); rc != 0) Fail(std::string("floor baseline prefill: ") + std::strerror(-rc));
    for (auto& cl : clients) cl->Call(kNullEvent, data.data(), data.size());
  }
  const int n = p.sync_events;
  std::vector<Side> sides;
  sides.push_back({"rtt", [&] {
                     const int64_t t0 = NowNs();
                     pp.Run(p.rtt_iters);
                     return UsPer(t0, p.rtt_iters);
                   }, {}});
  sides.push_back({"ping", [&] {
                     const int64_t t0 = NowNs();
                     for (int i = 0; i < p.rtt_iters; ++i) c.Call(kNullPing, nullptr, 0);
                     return UsPer(t0, p.rtt_iters);
                   }, {}});
  sides.push_back({"baseline", [&] {
                     const int64_t t0 = NowNs();
                     for (int i = 0; i < n; ++i) {
                       if (int rc = base.Emit(data.data(), data.size()); rc != 0) {
                         Fail(std::string("floor baseline emit: ") + std::strerror(-rc));
                       }
                     }
                     return UsPer(t0, n);
                   }, {}});
  for (size_t k = 0; k < targets.size(); ++k) {
    NullClient* cl = clients[k].get();
    sides.push_back({targets[k].id + ".sync", [cl, n, &data] {
                       const int64_t t0 = NowNs();
                       for (int i = 0; i < n; ++i) cl->Call(kNullEvent, data.data(), data.size());
                       return UsPer(t0, n);
                     }, {}});
  }
  if (p.atraced_emit) {
    for (int i = 0; i < 10; ++i) p.atraced_emit();  // to its limit too
    p.atraced_settle();
    sides.push_back({"atraced", [&] {
                       const int64_t t0 = NowNs();
                       for (int i = 0; i < n; ++i) p.atraced_emit();
                       const double us = UsPer(t0, n);
                       p.atraced_settle();  // its deletes finish outside the timing, as in churn
                       return us;
                     }, {}});
  }
  Interleave(sides, p.sync_rounds);

  // All really at their limit and aging (outside the timing): the servers did the disk work.
  if (base.dirs() != 10) Fail("floor: baseline holds " + std::to_string(base.dirs()) + " dirs");
  for (const auto& t : targets) {
    if (long got = ServerEventDirs(*t.nd, 10); got != 10) {
      Fail("floor: the " + t.name + "'s roots hold " + std::to_string(got) + " event dirs, expected 10");
    }
  }

  auto& rtt = sides[0].values;
  auto& ping = sides[1].values;
  auto& basev = sides[2].values;
  auto& sync = sides[3].values;
  const std::string ev = "one event, one 4 KiB file, record num 10 at its limit, " + std::to_string(n) + " events/round";
  table.AddValue("floor.rtt64", "64-byte ping-pong over a Unix socket pair (as churn.rtt64), in the floor rounds, " +
                                    std::to_string(p.rtt_iters) + "/round", "us", rtt);
  table.AddValue("floor.ping", "null daemon ping: 8-byte request, 16-byte reply through its epoll loop, " +
                                   std::to_string(p.rtt_iters) + "/round", "us", ping);
  table.AddValue("floor.baseline", "CANN-style in-process (CannWriter): " + ev, "us/event", basev);
  table.AddValue("floor.sync", "null daemon: 4 KiB event request, server writes it with a CannWriter, 16-byte reply; " + ev,
                 "us/event", sync);
  table.AddValue("floor.sync.vs_limit",
                 "events/s of floor.sync / (1 / (floor.baseline + floor.rtt64)), per round (churn's limit)", "x",
                 Ratios(Sum(basev, rtt), sync));
  table.AddValue("floor.sync.vs_ping_limit", "events/s of floor.sync / (1 / (floor.baseline + floor.ping)), per round",
                 "x", Ratios(Sum(basev, ping), sync));
  const size_t atraced_side = 3 + targets.size();
  if (p.atraced_emit) {
    auto& ours = sides[atraced_side].values;
    table.AddValue("floor.sync.atraced", "atrace_emit through atraced (record num 10), the same events in the same rounds",
                   "us/event", ours);
    table.AddValue("floor.sync.atraced.vs_limit", "events/s of floor.sync.atraced / (1 / (floor.baseline + floor.rtt64)), per round",
                   "x", Ratios(Sum(basev, rtt), ours));
    table.AddValue("floor.sync.atraced_vs_null", "events/s atraced / null daemon, per round: how far atraced is from the floor",
                   "x", Ratios(sync, ours));
  }
  for (size_t k = 1; k < targets.size(); ++k) {
    const Target& t = targets[k];
    auto& mt = sides[3 + k].values;
    table.AddValue(t.id + ".sync", t.name + ": the same event requests, one client (one worker busy); " + ev, "us/event", mt);
    table.AddValue(t.id + ".sync.vs_limit", "events/s of " + t.id + ".sync / (1 / (floor.baseline + floor.rtt64)), per round",
                   "x", Ratios(Sum(basev, rtt), mt));
    table.AddValue(t.id + ".sync.vs_st", "events/s " + t.name + " / single-threaded null daemon, per round", "x",
                   Ratios(sync, mt));
    if (p.atraced_emit) {
      table.AddValue("floor.sync.atraced_vs_" + t.id.substr(6), "events/s atraced / " + t.name + ", per round", "x",
                     Ratios(mt, sides[atraced_side].values));
    }
  }
}

// 64 KiB appends streamed without a reply each, one acknowledged round trip at the end, and
// the same appends each acknowledged, against direct write() of the same chunks (the bulk
// case's baseline).
void BulkRows(const FloorParams& p, NullDaemon& nd, const std::string& append_file, Table& table) {
  const auto chunk = Pattern(kBulkChunk);
  const size_t chunks = p.bulk_bytes / kBulkChunk;
  const double mib = static_cast<double>(chunks * kBulkChunk) / (1 << 20);
  const std::string base_dir = p.work + "/floor/bulk-base";
  if (!MakeDirs(base_dir)) Fail("mkdir " + base_dir + ": " + std::strerror(errno));
  NullClient c(nd.socket());
  int round = 0;
  uint64_t acked = 0;
  std::vector<Side> sides;
  sides.push_back({"baseline", [&] {
                     return DirectAppendMiBps(base_dir + "/bulk_" + std::to_string(round++) + ".txt", chunk, chunks);
                   }, {}});
  sides.push_back({"stream", [&] {
                     const int64_t t0 = NowNs();
                     for (size_t i = 0; i + 1 < chunks; ++i) c.Send(kNullAppend, chunk.data(), kBulkChunk);
                     const NullReply r = c.Call(kNullAppend | kWantReply, chunk.data(), kBulkChunk);
                     const int64_t t1 = NowNs();
                     if (r.value - acked != chunks * kBulkChunk) {
                       Fail("floor bulk: the null daemon appended " + std::to_string(r.value - acked) + " bytes");
                     }
                     acked = r.value;
                     // Drop the data outside the timing, as the bulk case does for atraced.
                     if (::truncate(append_file.c_str(), 0) != 0) Fail("truncate " + append_file + ": " + std::strerror(errno));
                     return mib / (static_cast<double>(t1 - t0) / 1e9);
                   }, {}});
  // What atrace_file_write promises (one round trip per call): every append waits for its reply.
  sides.push_back({"acked", [&] {
                     const int64_t t0 = NowNs();
                     NullReply r{};
                     for (size_t i = 0; i < chunks; ++i) r = c.Call(kNullAppend | kWantReply, chunk.data(), kBulkChunk);
                     const int64_t t1 = NowNs();
                     if (r.value - acked != chunks * kBulkChunk) {
                       Fail("floor bulk (acked): the null daemon appended " + std::to_string(r.value - acked) + " bytes");
                     }
                     acked = r.value;
                     if (::truncate(append_file.c_str(), 0) != 0) Fail("truncate " + append_file + ": " + std::strerror(errno));
                     return mib / (static_cast<double>(t1 - t0) / 1e9);
                   }, {}});
  Interleave(sides, p.bulk_rounds);
  auto& base = sides[0].values;
  auto& stream = sides[1].values;
  auto& each = sides[2].values;
  const std::string sz = std::to_string(chunks * kBulkChunk >> 20) + " MiB/round in 64 KiB appends, one file";
  table.AddValue("floor.bulk.baseline", "CANN-style write() to an O_APPEND file (as bulk.baseline), " + sz, "MiB/s", base);
  table.AddValue("floor.bulk.stream",
                 "64 KiB append requests streamed to the null daemon (it write()s each), no reply but the last, " + sz,
                 "MiB/s", stream);
  table.AddValue("floor.bulk.vs_baseline", "write rate null daemon streaming / direct write(), per round", "x",
                 Ratios(stream, base));
  table.AddValue("floor.bulk.acked", "the same appends, each waiting for its reply (as atrace_file_write), " + sz,
                 "MiB/s", each);
  table.AddValue("floor.bulk.acked.vs_baseline", "write rate null daemon, a reply per append / direct write(), per round",
                 "x", Ratios(each, base));
  RemoveTree(base_dir);
}

// N processes each looping event round trips to a null daemon, against N CANN-style
// processes (the concurrency case's baseline), through the same process runner; every null
// daemon and the baseline in the same rounds.
void ConcRows(const FloorParams& p, const std::vector<Target>& targets, Table& table) {
  const std::string base_root = p.work + "/floor/conc-base";
  const size_t nc = p.conc_clients.size();
  // series[k][i]: target k (targets.size() = the baseline) at client count i.
  std::vector<std::vector<ConcSeries>> series(targets.size() + 1, std::vector<ConcSeries>(nc));
  std::vector<Side> sides;
  for (size_t i = 0; i < nc; ++i) {
    const int n = p.conc_clients[i];
    for (size_t k = 0; k <= targets.size(); ++k) {
      const bool b = k == targets.size();
      ConcSeries* s = &series[k][i];
      const std::string socket = b ? std::string() : targets[k].nd->socket();
      const std::string what = b ? std::string("baseline") : targets[k].name;
      sides.push_back({(b ? std::string("base") : targets[k].id) + std::to_string(n), [&p, &base_root, socket, what, n, b, s] {
                         ConcSetup setup;
                         if (b) {
                           setup = [&base_root] { return CannProcessStep(base_root); };
                         } else {
                           setup = [socket]() -> ConcStep {
                             auto data = std::make_shared<const std::vector<uint8_t>>(Pattern(kEventBytes));
                             auto c = std::make_shared<NullClient>(socket);
                             return [c, data]() -> uint32_t {
                               const int64_t t0 = NowNs();
                               c->Call(kNullEvent, data->data(), data->size());
                               return static_cast<uint32_t>(NowNs() - t0);
                             };
                           };
                         }
                         ConcResult r = RunProcesses(n, p.conc_ms, setup);
                         if (b) RemoveTree(base_root);
                         if (!r.error.empty()) {
                           Fail("floor concurrency (" + std::to_string(n) + " " + what + "): " + r.error);
                         }
                         return s->Add(r);
                       }, {}});
    }
  }
  Interleave(sides, p.conc_rounds);
  for (auto& v : series) {
    for (auto& s : v) s.DropWarmup();
  }
  const auto& base = series[targets.size()];
  const auto& st = series[0];
  const std::string dur = std::to_string(p.conc_ms) + " ms/run";
  const size_t one = 0, last = nc - 1;
  for (size_t k = 0; k < targets.size(); ++k) {
    const Target& t = targets[k];
    const auto& ours = series[k];
    for (size_t i = 0; i < nc; ++i) {
      const std::string n = std::to_string(p.conc_clients[i]);
      const std::string id = t.id + ".conc.c" + n;
      table.AddValue(id + ".throughput",
                     n + " client processes, each looping 4 KiB event round trips to the " + t.name + ", events/s of all, " + dur,
                     "events/s", ours[i].eps);
      table.AddValue(id + ".rtt_p50", n + " clients: " + t.name + " event round trip (server writes the event), p50 of the run",
                     "us", ours[i].p50);
      table.AddValue(id + ".rtt_p99", n + " clients: " + t.name + " event round trip (server writes the event), p99 of the run",
                     "us", ours[i].p99);
      if (k == 0) {
        table.AddValue(id + ".baseline_throughput", n + " processes, CANN-style in-process churn (each its own limit 10), " + dur,
                       "events/s", base[i].eps);
      }
      table.AddValue(id + ".vs_baseline", "throughput " + t.name + " / CANN-style at " + n + " processes, per round", "x",
                     Ratios(ours[i].eps, base[i].eps));
      if (k > 0) {
        table.AddValue(id + ".vs_st", "throughput " + t.name + " / single-threaded null daemon at " + n + " processes, per round",
                       "x", Ratios(ours[i].eps, st[i].eps));
      }
    }
    if (p.conc_clients[one] == 1 && p.conc_clients[last] == 64) {
      table.AddValue(t.id + ".conc.c64.p99_vs_c1_p50",
                     t.name + " event round trip p99 at 64 clients / p50 at 1 client, per round", "x",
                     Ratios(ours[last].p99, ours[one].p50));
    }
  }
}

}  // namespace

void FloorCase(const FloorParams& p, Table& table) {
  const std::string dir = p.work + "/floor";
  NullDaemon::Options o;
  o.socket = p.work + "/floor.sock";
  o.event_root = dir + "/server-root";
  o.append_file = dir + "/append.txt";
  o.record_num = 10;
  // The same server with worker threads: one (the like-for-like check against the loop
  // above) and one per CPU this process may use.
  const int cpus = AllowedCpus();
  NullDaemon::Options o1 = o, on = o;
  o1.socket = p.work + "/floor-mt1.sock";
  o1.event_root = dir + "/mt1-root";
  o1.append_file = dir + "/mt1-append.txt";
  o1.threads = 1;
  on.socket = p.work + "/floor-mt.sock";
  on.event_root = dir + "/mt-root";
  on.append_file = dir + "/mt-append.txt";
  on.threads = cpus;
  // The null daemons first, so they hold no copy of the connections opened below; the echo
  // child after them (it then holds none of theirs either).
  NullDaemon nd(o), nd1(o1), ndn(on);
  PingPong pp;
  const std::vector<Target> targets{
      {"floor", "null daemon", &nd},
      {"floor.mt1", "multi-threaded null daemon with 1 worker", &nd1},
      {"floor.mt", "multi-threaded null daemon with " + std::to_string(cpus) + " workers (sched_getaffinity)", &ndn}};
  SyncRows(p, targets, pp, table);
  BulkRows(p, nd, o.append_file, table);
  ConcRows(p, targets, table);
  RemoveTree(dir);
}

}  // namespace atraced_bench
