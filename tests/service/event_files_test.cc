// Events and files: EVENT_BEGIN to EVENT_END, forwarder claims, passed descriptors, disk faults.
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("a full event: open, append, close, end", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  std::string dir = f.Begin(id, 7);
  proto::FileOpen o = ObjectFileRequest(7, 8, "RUNTIME");
  auto opened = f.Call(id, ATR_OP_FILE_OPEN, Payload(o));
  REQUIRE(opened.status == 0);
  proto::PathReply p;
  REQUIRE(proto::Decode(opened.body, &p).ok());
  CHECK(p.path == dir + "/schedule_tracer_RUNTIME.txt");
  std::string data = "abc\n";
  auto appended = f.Call(id, ATR_OP_FILE_APPEND, Payload(proto::FileAppend{8, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}}));
  REQUIRE(appended.status == 0);
  proto::SizeReply size;
  REQUIRE(proto::Decode(appended.body, &size).ok());
  CHECK(size.size == 4);
  CHECK(f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{8})).status == 0);
  CHECK(f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{8})).status == ATR_ENOENT);
  auto ended = f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{7}));
  REQUIRE(ended.status == 0);
  REQUIRE(proto::Decode(ended.body, &size).ok());
  CHECK(size.size == Blocks(dir, 4));  // the event's files on disk: a whole block for 4 bytes
  CHECK(ReadFile(p.path) == data);
  CHECK(f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{7})).status == ATR_ENOENT);
}

TEST_CASE("ts and stackcore file forms", "[service]") {
  ServiceFixture f;
  f.clock.Set(std::chrono::system_clock::time_point(std::chrono::seconds(1779460215)));
  auto id = f.Client(100);
  std::string dir = f.Begin(id, 1, ATR_SIDE_DEVICE);
  proto::FileOpen ts;
  ts.event_id = 1;
  ts.file_id = 1;
  ts.form = ATR_FILE_TS;
  ts.device_id = 5;
  auto r = f.Call(id, ATR_OP_FILE_OPEN, Payload(ts));
  REQUIRE(r.status == 0);
  CHECK(Exists(dir + "/schedule_tracer_ts_5.txt"));
  proto::FileOpen sc;
  sc.event_id = 1;
  sc.file_id = 2;
  sc.form = ATR_FILE_STACKCORE;
  sc.signo = 11;
  sc.tid = 123;
  sc.time = "20260101000000000000";
  REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(sc)).status == 0);
  CHECK(Exists(dir + "/stackcore_tracer_11_123_app_20260101000000000000.txt"));  // program from /proc
  sc.file_id = 3;
  sc.name = "my_prog";
  REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(sc)).status == 0);
  CHECK(Exists(dir + "/stackcore_tracer_11_123_my_prog_20260101000000000000.txt"));
}

TEST_CASE("ids are checked and per-client bounds hold", "[service]") {
  ServiceLimits o;
  o.max_events_per_client = 2;
  o.max_files_per_client = 1;
  ServiceFixture f(o);
  auto id = f.Client(100);
  int32_t status = 0;
  std::string msg;
  f.Begin(id, 1);
  f.Begin(id, 1, ATR_SIDE_HOST, 0, &status, &msg);
  CHECK(status == ATR_EEXIST);
  CHECK(msg.find("event_id") != std::string::npos);
  f.Begin(id, 2);
  f.Begin(id, 3, ATR_SIDE_HOST, 0, &status, &msg);
  CHECK(status == ATR_EBUSY);
  proto::FileOpen fo = ObjectFileRequest(9, 1, "x");
  CHECK(f.Call(id, ATR_OP_FILE_OPEN, Payload(fo)).status == ATR_ENOENT);
  fo.event_id = 1;
  CHECK(f.Call(id, ATR_OP_FILE_OPEN, Payload(fo)).status == 0);
  fo.file_id = 2;
  CHECK(f.Call(id, ATR_OP_FILE_OPEN, Payload(fo)).status == ATR_EBUSY);
  CHECK(f.Call(id, ATR_OP_FILE_APPEND, Payload(proto::FileAppend{5, {}})).status == ATR_ENOENT);
}

TEST_CASE("forwarder claims are allowed for root, the daemon uid and the group, and logged", "[service][security]") {
  ServiceLimits o;
  o.forwarder_gid = 777;
  ServiceFixture f(o);
  int32_t status = 0;
  std::string msg;
  SECTION("an ordinary uid is refused and the refusal logged") {
    auto id = f.Client(100, 1000, 1000);
    f.Begin(id, 1, ATR_SIDE_DEVICE, 200, &status, &msg);
    CHECK(status == ATR_EPERM);
    CHECK(msg.find("host_pid") != std::string::npos);
    CHECK(f.log.Has(LogLevel::kWarning, "refused EVENT_BEGIN from pid 100 uid 1000: EPERM host_pid: forwarder claim "
                                        "refused: this process may not write for host pid 200"));
    CHECK(f.store_->count(AgeClass::kDevice) == 0);
  }
  SECTION("root may, into the target's process dir, and it is logged") {
    auto target = f.Client(200);
    std::string target_dir = DirName(f.Begin(target, 1));
    auto fwd = f.Client(100, 0, 0);
    std::string path = f.Begin(fwd, 1, ATR_SIDE_DEVICE, 200, &status);
    REQUIRE(status == 0);
    CHECK(DirName(path) == target_dir);
    CHECK(ParseEventDirName(BaseName(path))->pid == 200);
    CHECK(f.log.Has(LogLevel::kNotice, "forwarder pid 100 uid 0 writes a device event for host pid 200"));
    CHECK(f.store_->count(AgeClass::kDevice) == 1);
  }
  SECTION("the daemon's own uid may") {
    auto fwd = f.Client(100, 4242, 1000);
    f.Begin(fwd, 1, ATR_SIDE_DEVICE, 200, &status);
    CHECK(status == 0);
  }
  SECTION("a member of the forwarder group (supplementary) may") {
    auto fwd = f.Client(300, 1000, 1000);
    f.Begin(fwd, 1, ATR_SIDE_DEVICE, 200, &status);
    CHECK(status == 0);
  }
  SECTION("only device events, only for live processes") {
    auto fwd = f.Client(100, 0, 0);
    f.Begin(fwd, 1, ATR_SIDE_HOST, 200, &status);
    CHECK(status == ATR_EINVAL);
    f.Begin(fwd, 2, ATR_SIDE_DEVICE, 5555, &status, &msg);
    CHECK(status == ATR_ESRCH);
  }
}

TEST_CASE("an application may send device events for itself", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100, 1000);
  int32_t status = -1;
  std::string path = f.Begin(id, 1, ATR_SIDE_DEVICE, 0, &status);
  CHECK(status == 0);
  CHECK(f.store_->count(AgeClass::kDevice) == 1);
  CHECK(ParseProcessDirName(BaseName(DirName(path)))->pid == 100);
}

TEST_CASE("disconnect ends events, keeps data and unpins", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  std::string dir = f.Begin(id, 1);
  proto::FileOpen o = ObjectFileRequest(1, 1, "x");
  REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(o)).status == 0);
  std::string data = "kept";
  REQUIRE(f.Call(id, ATR_OP_FILE_APPEND, Payload(proto::FileAppend{1, {reinterpret_cast<const uint8_t*>(data.data()), 4}})).status == 0);
  CHECK(f.service->clients() == 1);
  f.service->Disconnect(id);
  CHECK(f.service->clients() == 0);
  CHECK(ReadFile(dir + "/schedule_tracer_x.txt") == "kept");
  auto other = f.Client(200);
  for (uint32_t i = 1; i <= 10; ++i) f.Begin(other, i);
  CHECK_FALSE(Exists(dir));  // unpinned, so it aged
}

TEST_CASE("FILE_GET_FD passes a descriptor with its reply frame", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  std::string dir = f.Begin(id, 1);
  proto::FileOpen o = ObjectFileRequest(1, 1, "fd");
  REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(o)).status == 0);
  // Two requests in one batch: the descriptor belongs to the second reply frame.
  ReplyBatch batch;
  auto st = Payload(proto::StatusRequest{});
  f.service->Handle(id, {0, ATR_OP_STATUS, 0, 50}, st, batch);
  auto req = Payload(proto::IdRequest{1});
  f.service->Handle(id, {static_cast<uint32_t>(req.size()), ATR_OP_FILE_GET_FD, 0, 51}, req, batch);
  auto replies = ServiceFixture::Decode(batch);
  REQUIRE(replies.size() == 2);
  REQUIRE(batch.fds.size() == 1);
  size_t first_len = ATR_FRAME_HEADER_SIZE + replies[0].header.length;
  CHECK(batch.fds[0].offset == first_len);
  REQUIRE(::write(batch.fds[0].fd.get(), "via-fd", 6) == 6);
  batch.fds.clear();
  auto closed = f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}));
  proto::SizeReply size;
  REQUIRE(proto::Decode(closed.body, &size).ok());
  CHECK(size.size == 6);  // bytes written through the descriptor are accounted at close
  CHECK(ReadFile(dir + "/schedule_tracer_fd.bin").empty());
  CHECK(ReadFile(dir + "/schedule_tracer_fd.txt") == "via-fd");
}

// Defect 4 of issue 14: through a passed descriptor a client can make a sparse file whose
// length says nothing about the disk it takes. The fault FS fakes one: 1 TiB long, 8 KiB used.

TEST_CASE("a passed file counts by its allocated blocks and reports its length beside", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  std::string dir = f.Begin(id, 1);
  REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "sparse"))).status == 0);
  std::string appended = "abc";
  auto append = Payload(proto::FileAppend{1, {reinterpret_cast<const uint8_t*>(appended.data()), appended.size()}});
  REQUIRE(f.Call(id, ATR_OP_FILE_APPEND, append).status == 0);  // counted as written: 3 and 3
  UniqueFd fd;
  REQUIRE(f.Call(id, ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}), &fd).status == 0);
  REQUIRE(fd.valid());
  const std::string rel = dir.substr(f.fault_->trace_dir().size() + 1) + "/schedule_tracer_sparse.txt";
  constexpr uint64_t kTiB = 1ull << 40;
  f.fault_->FakeUsage(rel, {8192, kTiB + 1});

  // STATUS and LIST measure the open passed file now, not at its close.
  proto::StatusReply s;
  REQUIRE(proto::Decode(f.Call(id, ATR_OP_STATUS, {}).body, &s).ok());
  CHECK(s.bytes_written == 8192);
  CHECK(s.bytes_apparent == kTiB + 1);
  proto::ListReply list;
  REQUIRE(proto::Decode(f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{0, 10})).body, &list).ok());
  REQUIRE(list.entries.size() == 1);
  CHECK(list.entries[0].bytes == 8192);
  CHECK(list.entries[0].apparent_bytes == kTiB + 1);

  // An append to a passed file is measured from the file too, not added as written.
  proto::SizeReply size;
  REQUIRE(proto::Decode(f.Call(id, ATR_OP_FILE_APPEND, append).body, &size).ok());
  CHECK(size.size == kTiB + 1);
  f.fault_->FakeUsage(rel, {4096, 10});  // shrunk by its holder: the counters keep the peak
  REQUIRE(proto::Decode(f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1})).body, &size).ok());
  CHECK(size.size == 10);  // the close replies the file's length
  REQUIRE(proto::Decode(f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{1})).body, &size).ok());
  CHECK(size.size == 8192);
  REQUIRE(proto::Decode(f.Call(id, ATR_OP_STATUS, {}).body, &s).ok());
  CHECK(s.bytes_written == 8192);
  CHECK(s.bytes_apparent == kTiB + 1);
}

TEST_CASE("disk faults on mkdir and write give error replies and leave the store consistent", "[service][faults]") {
  ServiceFixture f;
  auto id = f.Client(100);
  auto err = GENERATE(EIO, ENOSPC);
  SECTION("mkdir fails") {
    f.fault_->Fail(FsOp::kMakeDir, "schedule_event_", err, 1);
    int32_t status = 0;
    std::string msg;
    CHECK(f.Begin(id, 1, ATR_SIDE_HOST, 0, &status, &msg).empty());
    CHECK(status == -err);
    CHECK_FALSE(msg.empty());
    CHECK(f.store_->count(AgeClass::kHost) == 0);
    CHECK_FALSE(f.Begin(id, 1).empty());  // the same id works once the disk does
  }
  SECTION("write fails") {
    f.Begin(id, 1);
    proto::FileOpen o = ObjectFileRequest(1, 1, "x");
    REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(o)).status == 0);
    std::string data = "abc";
    auto append = Payload(proto::FileAppend{1, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}});
    f.fault_->Fail(FsOp::kAppend, "schedule_tracer_x", err, 1);
    auto failed = f.Call(id, ATR_OP_FILE_APPEND, append);
    CHECK(failed.status == -err);
    auto ok = f.Call(id, ATR_OP_FILE_APPEND, append);
    REQUIRE(ok.status == 0);
    proto::SizeReply size;
    REQUIRE(proto::Decode(ok.body, &size).ok());
    CHECK(size.size == 3);  // the failed append was not counted
    CHECK(f.store_->counters().bytes_written == Blocks(f.tmp.path(), 3));
    CHECK(f.store_->counters().bytes_apparent == 3);
  }
}

// ---- 1.1: rings ----------------------------------------------------------------------
