// Rings in sealed memfds for the service's tests, a ring-holding connection, and the fake
// crash inspector and runner: what the tests of rings, deaths and crashes share.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "service/service_fixture.h"
#include "support/test_rings.h"

namespace atraced::testing {

struct RingClient {
  ServiceFixture& f;
  TraceService::ClientId id;
  int32_t utc_offset_s = 0;  // what its rings say of its local time

  RingClient(ServiceFixture& fixture, int32_t pid, uint32_t uid = 1000) : f(fixture) {
    id = f.service->Connect({pid, uid, uid});
    proto::Hello h;
    h.minor = 1;
    h.features = ATR_FEATURE_MEMFD;
    REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  }
  void Register(uint32_t object_id, UniqueFd fd, bool exit_save = false, const std::string& name = "") {
    REQUIRE(TryRegister(object_id, std::move(fd), exit_save, name) == 0);
  }
  // RING_REGISTER's status.
  int32_t TryRegister(uint32_t object_id, UniqueFd fd, bool exit_save = false, const std::string& name = "") {
    proto::RingRegister m;
    m.object_id = object_id;
    m.msg_num = 4;
    m.msg_size = 64;
    m.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));
    m.utc_offset_s = utc_offset_s;
    m.name = name.empty() ? "obj" + std::to_string(object_id) : name;
    if (exit_save) m.flags = ATR_RING_EXIT_SAVE;
    auto payload = Payload(m);
    ReplyBatch batch;
    proto::FrameHeader fh{static_cast<uint32_t>(payload.size()), ATR_OP_RING_REGISTER, 0, ++f.request_id};
    f.service->Handle(id, fh, payload, batch, std::move(fd));
    return ServiceFixture::Decode(batch).at(0).status;
  }
};

// Event dirs of `kind` under the fixture's trace dir.
inline std::vector<std::string> KindDirs(ServiceFixture& f, const std::string& kind) {
  std::vector<std::string> out;
  const std::string trace = f.tmp.path() + "/atrace";
  for (const auto& proc : ListNames(trace)) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : ListNames(trace + "/" + proc)) {
      if (ev.rfind(kind + "_event_", 0) == 0) out.push_back(trace + "/" + proc + "/" + ev);
    }
  }
  return out;
}


// Says what a real inspector would, and what it was asked.
class FakeCrashInspector final : public CrashInspector {
 public:
  CrashFacts Inspect(const CrashTarget& target, std::chrono::milliseconds budget) override {
    asked.push_back({target.pid, target.tid});
    every_thread.push_back(target.every_thread);
    last_budget = budget;
    return {"100 app\n101 worker\n", "Thread 1 (100, app)\n#0 0x0000000000401136 0x0000000000400000 /usr/bin/app crash_here+0x6\n", "00400000-00401000 r-xp app\n"};
  }
  std::vector<std::pair<pid_t, pid_t>> asked;
  std::vector<bool> every_thread;  // per Inspect
  std::chrono::milliseconds last_budget{0};
};

// A connection that asked for CRASH (the library's second connection, holding no ring).
inline TraceService::ClientId CrashChannel(ServiceFixture& f, int32_t pid, uint64_t features = ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH) {
  auto id = f.service->Connect({pid, 1000, 1000});
  proto::Hello h;
  h.minor = 1;
  h.features = features;
  REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  return id;
}



// Process `pid` (program `program`) holds a ring and sends CRASH, which must succeed; returns
// the unwind deadline the inspector was given.
inline std::chrono::milliseconds CrashWithRing(ServiceFixture& f, FakeCrashInspector& inspector, int32_t pid,
                                        const char* program) {
  f.processes.processes[pid] = {pid, static_cast<uint64_t>(pid) * 10, program, {}, {}};
  RingClient rings(f, pid);
  rings.Register(1, RingWith({"r"}));
  REQUIRE(f.Call(CrashChannel(f, pid), ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, pid, 0})).status == 0);
  return inspector.last_budget;
}


// Keeps the runner's jobs until the test finishes them: the event loop's view of a crash
// inspected on another thread.
class FakeCrashRunner final : public CrashRunner {
 public:
  void Run(uint32_t /*uid*/, std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) override {
    jobs.push_back({std::move(inspect), std::move(done)});
  }
  void FinishAll() {
    auto pending = std::move(jobs);
    jobs.clear();
    for (auto& j : pending) j.done(j.inspect());
  }
  struct Job {
    std::function<CrashFacts()> inspect;
    std::function<void(CrashFacts)> done;
  };
  std::vector<Job> jobs;
};

// Keeps the saves' jobs until the test runs them: the event loop's view of the I/O workers
// (daemon/io). Jobs never run are dropped with the runner, as a stopped daemon drops them.
class HeldIoRunner final : public JobRunner {
 public:
  void Submit(uint32_t uid, std::function<void()> work, std::function<void()> done) override {
    jobs.push_back({uid, std::move(work), std::move(done)});
  }
  // Runs every held job (its work, then its completion, as the loop would get it).
  void RunAll() {
    auto pending = std::move(jobs);
    jobs.clear();
    for (auto& j : pending) {
      j.work();
      j.done();
    }
  }
  struct Job {
    uint32_t uid;
    std::function<void()> work;
    std::function<void()> done;
  };
  std::vector<Job> jobs;
};

struct DeferredCrash {
  FakeCrashInspector inspector;
  FakeCrashRunner runner;
  std::unique_ptr<ServiceFixture> f;
  std::vector<ReplyBatch> delivered;  // through the CRASH connection's reply sink

  DeferredCrash() {
    ServiceLimits o;
    TraceService::Dependencies deps;
    deps.crash_inspector = &inspector;
    deps.crash_runner = &runner;
    f = std::make_unique<ServiceFixture>(o, deps);
  }
  // Sends CRASH on `channel`: no reply now, it comes later.
  void Crash(TraceService::ClientId channel, int32_t pid) {
    f->service->SetReplySink(channel, [this](ReplyBatch&& b) { delivered.push_back(std::move(b)); });
    ReplyBatch batch;
    const auto payload = Payload(proto::Crash{SIGSEGV, 1, pid + 1, 0x10});
    proto::FrameHeader h{static_cast<uint32_t>(payload.size()), ATR_OP_CRASH, 0, 77};
    CHECK(f->service->Handle(channel, h, payload, batch) == TraceService::Reply::kLater);
    CHECK(batch.bytes.empty());
  }
};


}  // namespace atraced::testing
