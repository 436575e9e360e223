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

// Synchronous events, one at a time, against the churn case's limit: 1 / (the direct
// writer's event + one round trip), all measured in the same rounds.
void SyncRows(const FloorParams& p, NullDaemon& nd, const std::string& server_root, PingPong& pp, Table& table) {
  const auto data = Pattern(kEventBytes);
  CannWriter base(p.work + "/floor/base", 10);
  NullClient c(nd.socket());
  // Both to their limit first, so every measured event also ages one directory.
  for (int i = 0; i < 10; ++i) {
    if (int rc = base.Emit(data.data(), data.size()); rc != 0) Fail(std::string("floor baseline prefill: ") + std::strerror(-rc));
    c.Call(kNullEvent, data.data(), data.size());
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
  sides.push_back({"sync", [&] {
                     const int64_t t0 = NowNs();
                     for (int i = 0; i < n; ++i) c.Call(kNullEvent, data.data(), data.size());
                     return UsPer(t0, n);
                   }, {}});
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

  // Both really at their limit and aging (outside the timing): the server did the disk work.
  if (base.dirs() != 10) Fail("floor: baseline holds " + std::to_string(base.dirs()) + " dirs");
  if (long got = CountEventDirs(server_root + "/atrace"); got != 10) {
    Fail("floor: the null daemon's root holds " + std::to_string(got) + " event dirs, expected 10");
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
  if (p.atraced_emit) {
    auto& ours = sides[4].values;
    table.AddValue("floor.sync.atraced", "atrace_emit through atraced (record num 10), the same events in the same rounds",
                   "us/event", ours);
    table.AddValue("floor.sync.atraced.vs_limit", "events/s of floor.sync.atraced / (1 / (floor.baseline + floor.rtt64)), per round",
                   "x", Ratios(Sum(basev, rtt), ours));
    table.AddValue("floor.sync.atraced_vs_null", "events/s atraced / null daemon, per round: how far atraced is from the floor",
                   "x", Ratios(sync, ours));
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

// N processes each looping event round trips to the null daemon, against N CANN-style
// processes (the concurrency case's baseline), through the same process runner.
void ConcRows(const FloorParams& p, NullDaemon& nd, Table& table) {
  const std::string socket = nd.socket();
  const std::string base_root = p.work + "/floor/conc-base";
  std::vector<ConcSeries> ours(p.conc_clients.size()), base(p.conc_clients.size());
  std::vector<Side> sides;
  for (size_t i = 0; i < p.conc_clients.size(); ++i) {
    const int n = p.conc_clients[i];
    for (bool b : {false, true}) {
      ConcSeries* s = b ? &base[i] : &ours[i];
      sides.push_back({std::string(b ? "base" : "null") + std::to_string(n), [&p, &socket, &base_root, n, b, s] {
                         ConcSetup setup;
                         if (b) {
                           setup = [&base_root] { return CannProcessStep(base_root); };
                         } else {
                           setup = [&socket]() -> ConcStep {
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
                           Fail("floor concurrency (" + std::to_string(n) + (b ? " baseline" : " null daemon") + "): " + r.error);
                         }
                         return s->Add(r);
                       }, {}});
    }
  }
  Interleave(sides, p.conc_rounds);
  for (auto* v : {&ours, &base}) {
    for (auto& s : *v) s.DropWarmup();
  }
  const std::string dur = std::to_string(p.conc_ms) + " ms/run";
  size_t one = 0, last = p.conc_clients.size() - 1;
  for (size_t i = 0; i < p.conc_clients.size(); ++i) {
    const std::string n = std::to_string(p.conc_clients[i]);
    const std::string id = "floor.conc.c" + n;
    table.AddValue(id + ".throughput",
                   n + " client processes, each looping 4 KiB event round trips to the null daemon, events/s of all, " + dur,
                   "events/s", ours[i].eps);
    table.AddValue(id + ".rtt_p50", n + " clients: null daemon event round trip (server writes the event), p50 of the run",
                   "us", ours[i].p50);
    table.AddValue(id + ".rtt_p99", n + " clients: null daemon event round trip (server writes the event), p99 of the run",
                   "us", ours[i].p99);
    table.AddValue(id + ".baseline_throughput", n + " processes, CANN-style in-process churn (each its own limit 10), " + dur,
                   "events/s", base[i].eps);
    table.AddValue(id + ".vs_baseline", "throughput null daemon / CANN-style at " + n + " processes, per round", "x",
                   Ratios(ours[i].eps, base[i].eps));
  }
  if (p.conc_clients[one] == 1 && p.conc_clients[last] == 64) {
    table.AddValue("floor.conc.c64.p99_vs_c1_p50",
                   "null daemon event round trip p99 at 64 clients / p50 at 1 client, per round", "x",
                   Ratios(ours[last].p99, ours[one].p50));
  }
}

}  // namespace

void FloorCase(const FloorParams& p, Table& table) {
  const std::string dir = p.work + "/floor";
  const std::string server_root = dir + "/server-root";
  NullDaemon::Options o;
  o.socket = p.work + "/floor.sock";
  o.event_root = server_root;
  o.append_file = dir + "/append.txt";
  o.record_num = 10;
  // The null daemon first, so it holds no copy of the connections opened below; the echo
  // child after it (it then holds none of the null daemon's either).
  NullDaemon nd(o);
  PingPong pp;
  SyncRows(p, nd, server_root, pp, table);
  BulkRows(p, nd, o.append_file, table);
  ConcRows(p, nd, table);
  RemoveTree(dir);
}

}  // namespace atraced_bench
