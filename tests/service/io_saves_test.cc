// Saves on the I/O workers (docs/IO_WORKERS.md), seen from the event loop: the reply comes
// once the files are written, everyone else is served meanwhile, what a save in flight may
// still write is held against every bound, and one uid's queued saves are bounded by its
// share. The workers are held by the test (HeldIoRunner) so each moment can be looked at.
#include <catch2/catch.hpp>

#include <map>

#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

struct SavesOnWorkers {
  HeldIoRunner runner;
  std::unique_ptr<ServiceFixture> f;
  std::map<TraceService::ClientId, std::vector<Reply>> delivered;  // through each reply sink

  explicit SavesOnWorkers(ServiceLimits o = {}) {
    TraceService::Dependencies deps;
    deps.io_runner = &runner;
    f = std::make_unique<ServiceFixture>(o, deps);
  }
  ~SavesOnWorkers() { runner.jobs.clear(); }  // as a stopped daemon: never completed
  RingClient Ring(int32_t pid, uint32_t uid = 1000) {
    RingClient c(*f, pid, uid);
    f->service->SetReplySink(c.id, [this, id = c.id](ReplyBatch&& b) {
      for (auto& r : ServiceFixture::Decode(b)) delivered[id].push_back(std::move(r));
    });
    return c;
  }
  // Sends `op`; returns true when its reply comes later (none in the batch).
  bool Send(TraceService::ClientId id, uint16_t op, const std::vector<uint8_t>& payload, Reply* now = nullptr) {
    ReplyBatch batch;
    proto::FrameHeader h{static_cast<uint32_t>(payload.size()), op, 0, ++f->request_id};
    const TraceService::Reply where = f->service->Handle(id, h, payload, batch);
    auto replies = ServiceFixture::Decode(batch);
    if (where == TraceService::Reply::kLater) {
      CHECK(replies.empty());
      return true;
    }
    REQUIRE(replies.size() == 1);
    if (now) *now = replies[0];
    return false;
  }
};

const std::vector<uint8_t> kSaveAll = Payload(proto::RingSaveAll{true, 0});

}  // namespace

TEST_CASE("a save on the I/O workers replies once its files are written, and others are served meanwhile",
          "[service][io][rings]") {
  SavesOnWorkers s;
  RingClient a = s.Ring(100);
  a.Register(1, RingWith({"first", "second"}));
  REQUIRE(s.Send(a.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  const uint32_t save_request = s.f->request_id;
  REQUIRE(s.runner.jobs.size() == 1);
  CHECK(s.runner.jobs[0].uid == 1000);
  CHECK(s.f->service->saves_in_flight() == 1);
  CHECK(s.delivered[a.id].empty());
  // The directory is made and counted on the loop before the job runs.
  REQUIRE(KindDirs(*s.f, "schedule").size() == 1);
  CHECK(s.f->store_->count(AgeClass::kHost) == 1);
  CHECK(s.f->store_->space().reserved() > 0);
  // Another user is served while the save waits for its worker.
  auto other = s.f->Client(200, 2000);
  CHECK(s.f->Call(other, ATR_OP_STATUS, {}).status == 0);
  CHECK(!s.f->Begin(other, 1).empty());

  s.runner.RunAll();
  REQUIRE(s.delivered[a.id].size() == 1);
  CHECK(s.delivered[a.id][0].status == 0);
  CHECK(s.delivered[a.id][0].header.request_id == save_request);
  CHECK(s.delivered[a.id][0].header.opcode == ATR_OP_RING_SAVE_ALL);
  const auto dirs = KindDirs(*s.f, "schedule");
  std::string text;
  for (const auto& d : dirs) {
    for (const auto& n : ListNames(d)) {
      if (n == "schedule_tracer_obj1.txt") text = ReadFile(d + "/" + n);
    }
  }
  CHECK(text.find("first\n") != std::string::npos);
  CHECK(text.find("second\n") != std::string::npos);
  CHECK(s.f->store_->space().reserved() == 0);  // the reservation became what was written
  CHECK(s.f->store_->counters().bytes_written >= text.size());
  CHECK(s.f->service->saves_in_flight() == 0);
  CHECK(s.f->service->counters().rings_saved == 1);
}

TEST_CASE("what a save in flight may still write counts against max-bytes-per-client", "[service][io][bytes]") {
  ServiceLimits o;
  // One save of this ring reserves 517: 3 x (28 + 64) + 160 (the lost-records line) + 66 + 3 x 5
  // (the positions line, proto::MaxRingPositionsLine).
  o.max_bytes_per_client = 600;
  SavesOnWorkers s(o);
  RingClient a = s.Ring(100);
  a.Register(1, RingWith({"a", "b", "c"}));
  RingClient a2 = s.Ring(100);  // the same process's second connection
  a2.Register(1, RingWith({"x"}));
  REQUIRE(s.Send(a.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  Reply second;
  REQUIRE_FALSE(s.Send(a2.id, ATR_OP_RING_SAVE_ALL, kSaveAll, &second));
  CHECK(second.status == ATR_EBUSY);
  CHECK(second.message.find("max-bytes-per-client 600") != std::string::npos);
  s.runner.RunAll();
  REQUIRE(s.delivered[a.id].size() == 1);
  CHECK(s.delivered[a.id][0].status == 0);
  // What the first did not write is given back: a small save fits again.
  REQUIRE(s.Send(a2.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  s.runner.RunAll();
  REQUIRE(s.delivered[a2.id].size() == 1);
  CHECK(s.delivered[a2.id][0].status == 0);
}

TEST_CASE("one uid's queued saves stop at its share, another uid's still queue, last words are never refused",
          "[service][io][shares]") {
  ServiceLimits o;
  o.max_queued_bytes = 2600;
  o.uid_queued_share = 25;  // 650 bytes per uid: two saves of one record (28 + 64 + 160 + 66 + 5 = 323)
  SavesOnWorkers s(o);
  std::vector<RingClient> mine;
  for (int i = 0; i < 3; ++i) {
    mine.push_back(s.Ring(100 + i, 1000));
    mine.back().Register(1, RingWith({"r"}), /*exit_save=*/true);
  }
  CHECK(s.Send(mine[0].id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  CHECK(s.Send(mine[1].id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  Reply third;
  REQUIRE_FALSE(s.Send(mine[2].id, ATR_OP_RING_SAVE_ALL, kSaveAll, &third));
  CHECK(third.status == ATR_EAGAIN);
  CHECK(third.message.find("uid-queued-share") != std::string::npos);
  CHECK(KindDirs(*s.f, "schedule").size() == 2);  // refused before any directory
  // Another user is not held up by the first one's queue.
  RingClient theirs = s.Ring(200, 2000);
  theirs.Register(1, RingWith({"t"}));
  CHECK(s.Send(theirs.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  // An exit save is charged to the share but never refused by it.
  CHECK(s.Send(mine[2].id, ATR_OP_GOODBYE, {}));
  CHECK(s.runner.jobs.size() == 4);
  s.runner.RunAll();
  CHECK(KindDirs(*s.f, "exit").size() == 1);
  for (auto* c : {&mine[0], &mine[1], &theirs, &mine[2]}) {
    REQUIRE(s.delivered[c->id].size() == 1);
    CHECK(s.delivered[c->id][0].status == 0);
  }
  // Once the saves landed, the uid may queue again.
  CHECK(s.Send(mine[0].id, ATR_OP_RING_SAVE_ALL, kSaveAll));
}

TEST_CASE("a ring released or a client gone while its save runs is still written from its mapping",
          "[service][io][rings]") {
  SavesOnWorkers s;
  RingClient a = s.Ring(100);
  a.Register(1, RingWith({"kept"}));
  REQUIRE(s.Send(a.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  SECTION("released") { CHECK(s.f->Call(a.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{1})).status == 0); }
  SECTION("said GOODBYE and disconnected") {
    Reply bye;
    REQUIRE_FALSE(s.Send(a.id, ATR_OP_GOODBYE, {}, &bye));  // no exitSave object: nothing to save
    CHECK(bye.status == 0);
    s.f->service->Disconnect(a.id);
  }
  CHECK(s.f->service->rings() == 0);
  s.runner.RunAll();
  const auto dirs = KindDirs(*s.f, "schedule");
  REQUIRE(dirs.size() == 1);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("kept\n") != std::string::npos);
  CHECK(s.f->store_->space().reserved() == 0);
}

TEST_CASE("a save whose write fails replies with the error and gives its reservation back", "[service][io][faults]") {
  SavesOnWorkers s;
  RingClient a = s.Ring(100);
  a.Register(1, RingWith({"lost"}));
  s.f->fault_->Fail(FsOp::kAppend, "schedule_tracer_obj1", EIO, 1);
  REQUIRE(s.Send(a.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  s.runner.RunAll();
  REQUIRE(s.delivered[a.id].size() == 1);
  CHECK(s.delivered[a.id][0].status == -EIO);
  CHECK(s.f->store_->space().reserved() == 0);
  CHECK(s.f->service->saves_in_flight() == 0);
  CHECK(s.f->service->counters().rings_saved == 0);
}

TEST_CASE("a ring whose records all turn out torn leaves no file, as CANN writes none", "[service][io][rings]") {
  SavesOnWorkers s;
  RingClient a = s.Ring(100);
  UniqueFd ring = RingWith({"will be torn"});
  // The slot's closing sequence number no longer matches its head: a writer mid-record.
  const uint64_t torn = 99;
  REQUIRE(::pwrite(ring.get(), &torn, 8, ATR_RING_HEADER_SIZE + ATR_RING_SLOT_SIZE(64) - 8) == 8);
  a.Register(1, std::move(ring));
  REQUIRE(s.Send(a.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  s.runner.RunAll();
  REQUIRE(s.delivered[a.id].size() == 1);
  const auto dirs = KindDirs(*s.f, "schedule");
  REQUIRE(dirs.size() == 1);
  CHECK(ListNames(dirs[0]).empty());
  CHECK(s.f->log.Has(LogLevel::kWarning, "ring obj1 of pid 100"));
}

TEST_CASE("a death without GOODBYE is written by the workers and stays counted until it lands",
          "[service][io][death]") {
  SavesOnWorkers s;
  RingClient a = s.Ring(100);
  a.Register(1, RingWith({"last record"}));
  s.f->processes.ended[100] = ProcessEnd{true, SIGKILL};
  s.f->service->Disconnect(a.id);
  CHECK(s.f->service->saves_in_flight() == 1);
  CHECK(s.f->service->counters().deaths_recorded == 1);
  CHECK_FALSE(s.f->log.Has(LogLevel::kNotice, "ended without GOODBYE"));  // said once it is written
  s.runner.RunAll();
  const auto dirs = KindDirs(*s.f, "stackcore");
  REQUIRE(dirs.size() == 1);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("last record\n") != std::string::npos);
  CHECK(s.f->log.Has(LogLevel::kNotice, "ended without GOODBYE"));
  CHECK(s.f->service->saves_in_flight() == 0);
}

TEST_CASE("a save the store refuses gives back all it reserved: the next one fits the same bounds",
          "[service][io][bytes][shares]") {
  ServiceLimits o;
  o.max_bytes_per_client = 600;  // one save of this ring reserves 517 (3 x (28 + 64) + 160 + 66 + 3 x 5)
  o.max_queued_bytes = 2600;
  o.uid_queued_share = 25;       // 650 bytes per uid: one such save at a time
  SavesOnWorkers s(o);
  RingClient a = s.Ring(100);
  a.Register(1, RingWith({"a", "b", "c"}));
  // The event directory cannot be made: refused after the bytes and the share were reserved.
  s.f->fault_->Fail(FsOp::kMakeDir, "schedule_event_", EIO, 1);
  Reply refused;
  REQUIRE_FALSE(s.Send(a.id, ATR_OP_RING_SAVE_ALL, kSaveAll, &refused));
  CHECK(refused.status == ATR_EIO);
  // Had any of it stayed reserved, max-bytes-per-client (-EBUSY) or the uid's share
  // (-EAGAIN) would refuse this one.
  REQUIRE(s.Send(a.id, ATR_OP_RING_SAVE_ALL, kSaveAll));
  s.runner.RunAll();
  REQUIRE(s.delivered[a.id].size() == 1);
  CHECK(s.delivered[a.id][0].status == 0);
  CHECK(s.f->store_->space().reserved() == 0);
}
