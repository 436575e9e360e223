// Issue 21, finding 3, against the real binary: an unprivileged user (uid 65534) saves full
// rings as fast as it can, from eight connections at once, or dies holding hundreds of
// them, while root asks STATUS and writes events. Ring saves are formatted and written by the I/O workers
// (docs/IO_WORKERS.md), so root waits for the event loop only, never behind the saves.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "as_user.h"
#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/test_rings.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

// A trace root on tmpfs: on this machine's disk a delete discards synchronously, and the
// test would measure the disk, not the daemon.
struct ShmRoot {
  std::string path;
  ShmRoot() {
    char tmpl[] = "/dev/shm/atraced-fairness-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    REQUIRE(made != nullptr);
    path = made;
  }
  ~ShmRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// A daemon for the attacker's tests, its root on `root`.
DaemonProcess::Options OnShm(const ShmRoot& root) {
  DaemonProcess::Options o = ForAttacker();
  o.root = root.path;
  return o;
}

double Percentile(std::vector<double> v, double p) {
  REQUIRE(!v.empty());
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

double MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The bytes of saves waiting for or in the I/O workers, by all uids, as STATUS tells them.
uint64_t QueuedSaveBytes(const proto::StatusReply& s) {
  REQUIRE(s.shares.present);
  for (const auto& p : s.shares.pools) {
    if (p.pool == ATR_POOL_QUEUED_SAVES) return p.held;
  }
  FAIL("STATUS has no queued-saves pool");
  return 0;
}

// Root's STATUS, back to back for `span`: each round trip's time (reported, not asserted:
// timings belong to the bench) and how many were answered while saves were queued. A loop
// that wrote the saves itself could never answer one then: the writes would finish within
// the turn that queued them. So a STATUS that sees queued bytes is one the loop served
// while the saves were being written.
struct StatusWatch {
  std::vector<double> ms;
  size_t answered_while_queued = 0;
};
StatusWatch WatchStatus(RawClient& c, std::chrono::milliseconds span) {
  StatusWatch w;
  const auto until = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < until) {
    const auto t = std::chrono::steady_clock::now();
    const proto::StatusReply s = QueryStatus(c);
    w.ms.push_back(MsSince(t));
    if (QueuedSaveBytes(s) > 0) ++w.answered_while_queued;
  }
  return w;
}

// In the attacker: `connections` connections holding `rings` full rings each, all before it
// returns; reports how many registrations failed.
std::vector<RawClient> HoldFullRings(const std::string& socket, int connections, uint32_t rings, uint32_t msg_num,
                                     uint32_t msg_size, int* failed) {
  std::vector<RawClient> held;
  for (int k = 0; k < connections; ++k) {
    auto c = RawClient::Connect(socket);
    if (!c || !c->Hello(ATR_FEATURE_MEMFD)) {
      ++*failed;
      continue;
    }
    for (uint32_t id = 1; id <= rings; ++id) {
      UniqueFd ring = FullRingOf(msg_num, msg_size, msg_size - 1);
      auto r = c->CallWithFd(ATR_OP_RING_REGISTER, RegisterPayload(id, msg_num, msg_size), ring.get());
      if (!r || r->status != 0) ++*failed;
    }
    held.push_back(std::move(*c));
  }
  return held;
}

// Each attacking connection holds this many full rings of 512 records of 223 bytes (CANN's
// largest: msgNum x (msgSize + 16) <= 128 KiB): RING_SAVE_ALL formats about 8 MB of CANN
// text each time, as the 16 x 256 .bin rings did at about 105 MB a write.
constexpr int kConnections = 8;
constexpr uint32_t kRings = 64;
constexpr uint32_t kMsgNum = 512, kMsgSize = 224;

}  // namespace

TEST_CASE("fairness: while one user saves rings as fast as it can, another user's STATUS and events are served",
          "[hardening][security][shares][fairness]") {
  if (!NeedsRoot()) return;
  ShmRoot root;
  DaemonProcess d(OnShm(root));
  REQUIRE(StartForAttacker(d));
  Attacker attacker([&d](int out, int in) {
    std::atomic<bool> stop{false};
    std::atomic<int> ready{0}, saves{0}, refused{0}, broken{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < kConnections; ++k) {
      threads.emplace_back([&] {
        int failed = 0;
        auto held = HoldFullRings(d.socket(), 1, kRings, kMsgNum, kMsgSize, &failed);
        broken += failed;
        ++ready;
        if (held.empty()) return;
        RawClient* c = &held.front();
        const auto save_all = Payload(proto::RingSaveAll{true, 0});
        while (!stop) {
          auto r = c->Call(ATR_OP_RING_SAVE_ALL, save_all);
          if (!r) {
            ++broken;
            return;
          }
          ++(r->status == 0 ? saves : refused);
        }
      });
    }
    while (ready < kConnections) std::this_thread::sleep_for(10ms);
    Report(out, broken, "ready");
    WaitRelease(in);
    stop = true;
    for (auto& t : threads) t.join();
    Report(out, saves, std::to_string(refused) + " refused, " + std::to_string(broken) + " broken");
  });
  const std::string ready = attacker.Line(60s);
  INFO("attacker: " << ready);
  REQUIRE(ready == "0 ready\n");

  auto victim = RawClient::Connect(d.socket());
  REQUIRE(victim);
  REQUIRE(victim->Hello());
  std::vector<double> status_ms, emit_ms;
  size_t served_while_queued = 0;  // STATUS and the event after it, both while saves were queued
  const auto until = std::chrono::steady_clock::now() + 5s;
  for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
    auto t = std::chrono::steady_clock::now();
    const proto::StatusReply s = QueryStatus(*victim);
    status_ms.push_back(MsSince(t));
    const bool queued = QueuedSaveBytes(s) > 0;
    t = std::chrono::steady_clock::now();
    std::string error;
    const std::string dir = victim->Emit(ATR_EVENT_SCHEDULE, "victim", "record " + std::to_string(i) + "\n", &error);
    emit_ms.push_back(MsSince(t));
    REQUIRE(error.empty());
    REQUIRE(!dir.empty());
    if (queued) ++served_while_queued;
    std::this_thread::sleep_for(10ms);
  }
  attacker.Release();
  const std::string done = attacker.Line(60s);
  INFO("attacker: " << done);
  const int saves = std::atoi(done.c_str());
  const double status_p99 = Percentile(status_ms, 0.99), emit_p99 = Percentile(emit_ms, 0.99);
  Measure("fairness.attacker_saves", saves);
  Measure("fairness.status_p50_ms", Percentile(status_ms, 0.5));
  Measure("fairness.status_p99_ms", status_p99);
  Measure("fairness.emit_p50_ms", Percentile(emit_ms, 0.5));
  Measure("fairness.emit_p99_ms", emit_p99);
  Measure("fairness.victim_requests", status_ms.size());
  Measure("fairness.victim_served_while_queued", served_while_queued);
  // The load was real: the attacker's saves kept landing all along.
  CHECK(saves >= 20);
  CHECK(done.find(" 0 broken") != std::string::npos);
  // Root was served while the attacker's saves were queued, not after them: most of its
  // requests came while the eight connections kept the workers busy.
  CHECK(served_while_queued * 2 >= status_ms.size());
  CHECK(::kill(d.pid(), 0) == 0);  // alive
  CHECK(d.Stop() == 0);              // and stops cleanly, its queued saves landed
}

TEST_CASE("fairness: a user's process that dies holding 1024 full rings stalls nobody while its reports are written",
          "[hardening][security][shares][fairness][death]") {
  if (!NeedsRoot()) return;
  ShmRoot root;
  DaemonProcess d(OnShm(root));
  REQUIRE(StartForAttacker(d));
  Attacker attacker([&d](int out, int in) {
    int failed = 0;
    auto held = HoldFullRings(d.socket(), 4, 256, kMsgNum, kMsgSize, &failed);
    Report(out, failed, "ready");
    WaitRelease(in);  // until it is killed
  });
  const std::string ready = attacker.Line(60s);
  REQUIRE(ready == "0 ready\n");
  auto victim = RawClient::Connect(d.socket());
  REQUIRE(victim);
  REQUIRE(victim->Hello());
  // SIGKILL: no GOODBYE. Each of its four connections leaves a stackcore dir of 256 rings
  // (about 30 MB of text each), written while root is served.
  REQUIRE(::kill(attacker.pid, SIGKILL) == 0);
  const StatusWatch watch = WatchStatus(*victim, 3s);
  // Four "ended without GOODBYE" lines: every report landed (within the window or soon after).
  auto deaths_logged = [&d] {
    const std::string log = d.log();
    size_t n = 0;
    for (size_t at = log.find("ended without GOODBYE"); at != std::string::npos;
         at = log.find("ended without GOODBYE", at + 1)) {
      ++n;
    }
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (deaths_logged() < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
  const size_t deaths = deaths_logged();
  const std::string log = d.log();
  Measure("fairness.death_reports", deaths);
  Measure("fairness.death_status_p50_ms", Percentile(watch.ms, 0.5));
  Measure("fairness.death_status_max_ms", *std::max_element(watch.ms.begin(), watch.ms.end()));
  Measure("fairness.death_status_while_queued", watch.answered_while_queued);
  CHECK(deaths == 4);
  CHECK(log.find("256 ring(s) written") != std::string::npos);
  // Root's STATUS was answered while the dead process's reports were being written.
  CHECK(watch.answered_while_queued >= 2);
}

TEST_CASE("fairness: another user's save is written beside one user's long save, not after it",
          "[hardening][security][shares][fairness]") {
  // A worker runs a job to its end: the round robin between uids is between jobs. With one
  // worker, one user's long save (here about 33 MB of CANN text) would hold root's one-record
  // save until it ends; io-workers = auto is at least 2 so that it does not (IO_WORKERS.md,
  // "Size"). The daemon runs with auto: no --io-workers.
  if (!NeedsRoot()) return;
  ShmRoot root;
  DaemonProcess d(OnShm(root));
  REQUIRE(StartForAttacker(d));
  Attacker attacker([&d](int out, int in) {
    int failed = 0;
    auto held = HoldFullRings(d.socket(), 1, 256, kMsgNum, kMsgSize, &failed);
    Report(out, failed, "ready");
    WaitRelease(in);
    if (held.empty()) return;
    Report(out, 0, "saving");
    auto r = held.front().Call(ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0}));
    const auto at = std::chrono::steady_clock::now().time_since_epoch();  // CLOCK_MONOTONIC, as the test's
    Report(out, r ? r->status : -1, std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(at).count()));
    WaitRelease(in);
  });
  REQUIRE(attacker.Line(60s) == "0 ready\n");

  auto victim = RawClient::Connect(d.socket());
  REQUIRE(victim);
  REQUIRE(victim->Hello(ATR_FEATURE_MEMFD));
  UniqueFd ring = RingWith({"root's one record"});
  auto reg = victim->CallWithFd(ATR_OP_RING_REGISTER, RegisterPayload(1), ring.get());
  REQUIRE(reg);
  REQUIRE(reg->status == 0);
  auto watcher = RawClient::Connect(d.socket());
  REQUIRE(watcher);
  REQUIRE(watcher->Hello());

  attacker.Release();
  REQUIRE(attacker.Line(30s) == "0 saving\n");
  // Root asks once the attacker's save is reserved, i.e. queued or being written.
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (QueuedSaveBytes(QueryStatus(*watcher)) == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(100us);
  }
  REQUIRE(QueuedSaveBytes(QueryStatus(*watcher)) > 0);
  proto::RingReport report;
  report.wait = true;
  report.object_ids = {1};
  auto mine = victim->Call(ATR_OP_RING_REPORT, Payload(report));
  const auto root_done = std::chrono::steady_clock::now().time_since_epoch();
  REQUIRE(mine);
  CHECK(mine->status == 0);
  const std::string theirs = attacker.Line(60s);
  INFO("attacker: " << theirs);
  REQUIRE(theirs.rfind("0 ", 0) == 0);  // its save landed too
  const long long attacker_done_ns = std::atoll(theirs.c_str() + 2);
  // Root's reply came first: its save did not wait for the other user's to end.
  CHECK(std::chrono::duration_cast<std::chrono::nanoseconds>(root_done).count() < attacker_done_ns);
  attacker.Release();
}
