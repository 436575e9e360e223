// The request handler without a socket: decoded frames in, reply frames out.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atraced/core/posix_file_system.h"
#include "atraced/core/trace_service.h"
#include "atraced/proto/frame_decoder.h"
#include "atraced/proto/ring_layout.h"
#include "support/capture_log.h"
#include "support/fake_clock.h"
#include "support/fake_process_table.h"
#include "support/fault_file_system.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

struct Reply {
  proto::FrameHeader header;
  int32_t status;
  std::string message;
  std::vector<uint8_t> body;
};

class ServiceFixture {
 public:
  explicit ServiceFixture(ServiceOptions options = {}) {
    auto fs = PosixFileSystem::Open(tmp.path());
    REQUIRE(fs.ok());
    fs_ = std::move(*fs);
    fault_ = std::make_unique<FaultFileSystem>(*fs_);
    remover_ = std::make_unique<InlineRemover>(*fault_);
    store_ = std::make_unique<TraceStore>(*fault_, *remover_, clock, log.logger(), 10);
    REQUIRE(store_->Recover().ok());
    options.root = tmp.path();
    if (options.daemon_uid == 0) options.daemon_uid = 4242;
    processes.processes[100] = {100, 1111, "app", {}};
    processes.processes[200] = {200, 2222, "other", {}};
    processes.processes[300] = {300, 3333, "fwd", {777}};
    service = std::make_unique<TraceService>(*store_, processes, clock, log.logger(), options);
  }

  // Sends one request and returns its reply (and any passed fd).
  Reply Call(TraceService::ClientId id, uint16_t op, const std::vector<uint8_t>& payload, UniqueFd* fd = nullptr,
             bool* close_after = nullptr) {
    ReplyBatch batch;
    proto::FrameHeader h{static_cast<uint32_t>(payload.size()), op, 0, ++request_id};
    service->Handle(id, h, payload, batch);
    auto replies = Decode(batch);
    REQUIRE(replies.size() == 1);
    CHECK(replies[0].header.request_id == request_id);
    CHECK(replies[0].header.opcode == op);
    CHECK(replies[0].header.flags == ATR_FLAG_REPLY);
    if (fd && !batch.fds.empty()) *fd = std::move(batch.fds[0].fd);
    if (close_after) *close_after = batch.close_after;
    return replies[0];
  }

  static std::vector<Reply> Decode(const ReplyBatch& batch) {
    proto::FrameDecoder d;
    d.Feed(batch.bytes);
    std::vector<Reply> out;
    proto::FrameHeader h;
    std::span<const uint8_t> payload;
    while (d.Next(&h, &payload) == proto::FrameDecoder::Result::kFrame) {
      proto::ReplyHead head;
      REQUIRE_FALSE(proto::DecodeReply(payload, &head));
      out.push_back({h, head.status, head.message, {head.body.begin(), head.body.end()}});
    }
    return out;
  }

  TraceService::ClientId Client(int32_t pid, uint32_t uid = 1000, uint32_t gid = 1000, bool hello = true) {
    auto id = service->Connect({pid, uid, gid});
    if (hello) {
      proto::Hello h;
      h.features = ATR_FEATURE_FD_PASSING;
      REQUIRE(Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
    }
    return id;
  }

  std::string Begin(TraceService::ClientId id, uint32_t event_id, uint8_t side = ATR_SIDE_HOST, int32_t host_pid = 0,
                    int32_t* status = nullptr, std::string* message = nullptr) {
    proto::EventBegin b = BeginRequest(event_id);
    b.side = side;
    b.host_pid = host_pid;
    clock.Advance(std::chrono::milliseconds(1));
    auto r = Call(id, ATR_OP_EVENT_BEGIN, Payload(b));
    if (status) *status = r.status;
    if (message) *message = r.message;
    if (r.status != 0) return "";
    proto::PathReply p;
    REQUIRE_FALSE(proto::Decode(r.body, &p));
    return p.path;
  }

  TempDir tmp;
  FakeClock clock;
  CaptureLog log;
  FakeProcessTable processes;
  std::unique_ptr<PosixFileSystem> fs_;
  std::unique_ptr<FaultFileSystem> fault_;
  std::unique_ptr<InlineRemover> remover_;
  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TraceService> service;
  uint32_t request_id = 0;
};

std::string DirName(const std::string& path) { return path.substr(0, path.rfind('/')); }
std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

TEST_CASE("HELLO comes first, once, with a known major version", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100, 1000, 1000, /*hello=*/false);
  auto early = f.Call(id, ATR_OP_STATUS, {});
  CHECK(early.status == ATR_EPROTO);
  CHECK(early.message == "opcode: send HELLO first");
  proto::Hello h;
  h.features = ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD | (1ull << 40);
  auto ok = f.Call(id, ATR_OP_HELLO, Payload(h));
  REQUIRE(ok.status == 0);
  proto::HelloReply hr;
  REQUIRE_FALSE(proto::Decode(ok.body, &hr));
  CHECK(hr.features == (ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD));  // only what the daemon has
  CHECK(hr.minor == ATR_VERSION_MINOR_MEMFD);
  CHECK(hr.daemon_pid == static_cast<uint32_t>(::getpid()));  // for PR_SET_PTRACER
  CHECK(hr.peer_pid == 100);
  CHECK(hr.peer_uid == 1000);
  CHECK(hr.max_payload == ATR_MAX_PAYLOAD);
  CHECK(f.Call(id, ATR_OP_HELLO, Payload(h)).status == ATR_EPROTO);

  auto other = f.Client(200, 1000, 1000, false);
  proto::Hello v2;
  v2.major = 2;
  bool close_after = false;
  auto refused = f.Call(other, ATR_OP_HELLO, Payload(v2), nullptr, &close_after);
  CHECK(refused.status == ATR_EPROTONOSUPPORT);
  CHECK(close_after);
}

TEST_CASE("unknown opcodes and reply-flagged requests are refused, not fatal", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  CHECK(f.Call(id, 99, {}).status == ATR_ENOSYS);
  ReplyBatch batch;
  proto::FrameHeader h{0, ATR_OP_STATUS, ATR_FLAG_REPLY, 5};
  f.service->Handle(id, h, {}, batch);
  CHECK(ServiceFixture::Decode(batch)[0].status == ATR_EPROTO);
  CHECK(f.Call(id, ATR_OP_STATUS, {}).status == 0);
  CHECK(f.service->counters().requests_refused == 2);
}

TEST_CASE("identity comes from the peer credentials and /proc", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100, 1000);
  std::string path = f.Begin(id, 1);
  REQUIRE_FALSE(path.empty());
  auto proc = ParseProcessDirName(BaseName(DirName(path)));
  REQUIRE(proc);
  CHECK(proc->pid == 100);
  CHECK(proc->pgid == 100);
  auto ev = ParseEventDirName(BaseName(path));
  REQUIRE(ev);
  CHECK(ev->pid == 100);
  // host_pid equal to the peer's own pid is no claim at all.
  std::string own = f.Begin(id, 2, ATR_SIDE_HOST, 100);
  CHECK(DirName(own) == DirName(path));
}

TEST_CASE("a process dir keeps the time of the pid's first connection", "[service]") {
  ServiceFixture f;
  auto first = f.Client(100);
  std::string a = f.Begin(first, 1);
  f.clock.Advance(std::chrono::seconds(5));
  auto second = f.Client(100);  // same process, another connection
  std::string b = f.Begin(second, 1);
  CHECK(DirName(a) == DirName(b));
  // The pid is reused by a new process (new start time): a new process dir.
  f.service->Disconnect(first);
  f.service->Disconnect(second);
  f.processes.processes[100].start_ticks = 9999;
  f.clock.Advance(std::chrono::seconds(5));
  auto reused = f.Client(100);
  std::string c = f.Begin(reused, 1);
  CHECK(DirName(c) != DirName(a));
}

TEST_CASE("a full event: open, append, close, end", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  std::string dir = f.Begin(id, 7);
  proto::FileOpen o = ObjectFileRequest(7, 8, "RUNTIME");
  auto opened = f.Call(id, ATR_OP_FILE_OPEN, Payload(o));
  REQUIRE(opened.status == 0);
  proto::PathReply p;
  REQUIRE_FALSE(proto::Decode(opened.body, &p));
  CHECK(p.path == dir + "/schedule_tracer_RUNTIME.txt");
  std::string data = "abc\n";
  auto appended = f.Call(id, ATR_OP_FILE_APPEND, Payload(proto::FileAppend{8, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}}));
  REQUIRE(appended.status == 0);
  proto::SizeReply size;
  REQUIRE_FALSE(proto::Decode(appended.body, &size));
  CHECK(size.size == 4);
  CHECK(f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{8})).status == 0);
  CHECK(f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{8})).status == ATR_ENOENT);
  auto ended = f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{7}));
  REQUIRE(ended.status == 0);
  REQUIRE_FALSE(proto::Decode(ended.body, &size));
  CHECK(size.size == 4);
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
  ServiceOptions o;
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
  ServiceOptions o;
  o.forwarder_gid = 777;
  ServiceFixture f(o);
  int32_t status = 0;
  std::string msg;
  SECTION("an ordinary uid is refused and the refusal logged") {
    auto id = f.Client(100, 1000, 1000);
    f.Begin(id, 1, ATR_SIDE_DEVICE, 200, &status, &msg);
    CHECK(status == ATR_EPERM);
    CHECK(msg.find("host_pid") != std::string::npos);
    CHECK(f.log.Has(LogLevel::kWarning, "forwarder claim refused: pid 100 uid 1000 may not write for host pid 200"));
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
  REQUIRE_FALSE(proto::Decode(closed.body, &size));
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
  REQUIRE_FALSE(proto::Decode(f.Call(id, ATR_OP_STATUS, {}).body, &s));
  CHECK(s.bytes_written == 8192);
  CHECK(s.bytes_apparent == kTiB + 1);
  proto::ListReply list;
  REQUIRE_FALSE(proto::Decode(f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{0, 10})).body, &list));
  REQUIRE(list.entries.size() == 1);
  CHECK(list.entries[0].bytes == 8192);
  CHECK(list.entries[0].apparent_bytes == kTiB + 1);

  // An append to a passed file is measured from the file too, not added as written.
  proto::SizeReply size;
  REQUIRE_FALSE(proto::Decode(f.Call(id, ATR_OP_FILE_APPEND, append).body, &size));
  CHECK(size.size == kTiB + 1);
  f.fault_->FakeUsage(rel, {4096, 10});  // shrunk by its holder: the counters keep the peak
  REQUIRE_FALSE(proto::Decode(f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1})).body, &size));
  CHECK(size.size == 10);  // the close replies the file's length
  REQUIRE_FALSE(proto::Decode(f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{1})).body, &size));
  CHECK(size.size == 8192);
  REQUIRE_FALSE(proto::Decode(f.Call(id, ATR_OP_STATUS, {}).body, &s));
  CHECK(s.bytes_written == 8192);
  CHECK(s.bytes_apparent == kTiB + 1);
}

TEST_CASE("status, list and vacuum", "[service]") {
  ServiceFixture f;
  auto id = f.Client(100);
  for (uint32_t i = 1; i <= 3; ++i) {
    f.Begin(id, i);
    REQUIRE(f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{i})).status == 0);
  }
  auto st = f.Call(id, ATR_OP_STATUS, {});
  proto::StatusReply s;
  REQUIRE_FALSE(proto::Decode(st.body, &s));
  CHECK(s.record_num == 10);
  CHECK(s.host_dirs == 3);
  CHECK(s.clients == 1);
  CHECK(s.events_begun == 3);
  CHECK(s.root == f.tmp.path());
  auto l = f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{0, 2}));
  proto::ListReply list;
  REQUIRE_FALSE(proto::Decode(l.body, &list));
  REQUIRE(list.entries.size() == 2);
  CHECK(list.entries[0].seq < list.entries[1].seq);
  CHECK(list.entries[0].pid == 100);
  CHECK(list.entries[0].uid == 1000);
  auto rest = f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{list.entries[1].seq, 100}));
  proto::ListReply tail;
  REQUIRE_FALSE(proto::Decode(rest.body, &tail));
  CHECK(tail.entries.size() == 1);
  auto v = f.Call(id, ATR_OP_VACUUM, Payload(proto::VacuumRequest{true}));
  proto::VacuumReply vr;
  REQUIRE_FALSE(proto::Decode(v.body, &vr));
  CHECK(vr.paths.empty());
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
    REQUIRE_FALSE(proto::Decode(ok.body, &size));
    CHECK(size.size == 3);  // the failed append was not counted
    CHECK(f.store_->counters().bytes_written == 3);
  }
}

// ---- 1.1: rings ----------------------------------------------------------------------

namespace {

// A sealed memfd holding an empty ring of 4 x 64 (the header as libascend_trace writes it).
UniqueFd EmptyRing() {
  const uint32_t bytes = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));
  UniqueFd fd(::memfd_create("ring", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  REQUIRE(fd.valid());
  REQUIRE(::ftruncate(fd.get(), bytes) == 0);
  atr_ring_header h{};
  h.magic = ATR_RING_MAGIC;
  h.version = ATR_RING_VERSION;
  h.header_size = ATR_RING_HEADER_SIZE;
  h.msg_num = 4;
  h.msg_size = 64;
  h.slot_size = ATR_RING_SLOT_SIZE(64);
  h.realtime_ns = 1;
  h.monotonic_ns = 1;
  REQUIRE(::pwrite(fd.get(), &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h));
  REQUIRE(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  return fd;
}

std::vector<uint8_t> RegisterPayload(uint32_t id) {
  proto::RingRegister m;
  m.object_id = id;
  m.msg_num = 4;
  m.msg_size = 64;
  m.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));
  m.name = "obj" + std::to_string(id);
  return Payload(m);
}

}  // namespace

TEST_CASE("rings need the MEMFD feature, a descriptor, and stay within their bounds", "[service][rings]") {
  ServiceOptions o;
  o.max_rings_per_client = 2;
  ServiceFixture f(o);
  auto plain = f.Client(100);  // HELLO without ATR_FEATURE_MEMFD
  CHECK(f.Call(plain, ATR_OP_RING_REGISTER, RegisterPayload(1)).status == ATR_ENOTSUP);

  auto id = f.service->Connect({200, 1000, 1000});
  proto::Hello h;
  h.features = ATR_FEATURE_MEMFD;
  REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  auto call_with = [&](uint16_t op, const std::vector<uint8_t>& payload, UniqueFd fd, bool* close_after) {
    ReplyBatch batch;
    proto::FrameHeader fh{static_cast<uint32_t>(payload.size()), op, 0, ++f.request_id};
    f.service->Handle(id, fh, payload, batch, std::move(fd));
    *close_after = batch.close_after;
    return ServiceFixture::Decode(batch).at(0);
  };
  bool close_after = false;
  CHECK(f.Call(id, ATR_OP_RING_REGISTER, RegisterPayload(1)).status == ATR_EBADF);  // no memfd
  CHECK(call_with(ATR_OP_RING_REGISTER, RegisterPayload(1), EmptyRing(), &close_after).status == 0);
  CHECK(call_with(ATR_OP_RING_REGISTER, RegisterPayload(1), EmptyRing(), &close_after).status == ATR_EEXIST);
  CHECK(call_with(ATR_OP_RING_REGISTER, RegisterPayload(2), EmptyRing(), &close_after).status == 0);
  auto over = call_with(ATR_OP_RING_REGISTER, RegisterPayload(3), EmptyRing(), &close_after);
  CHECK(over.status == ATR_EBUSY);
  CHECK(f.service->rings() == 2);
  CHECK(f.service->counters().rings_refused == 3);  // no memfd, a repeated id, over the bound
  CHECK_FALSE(close_after);
  // An empty ring is saved as nothing: no event directory is made for it.
  proto::RingReport report;
  report.wait = true;
  report.object_ids = {1, 2};
  CHECK(f.Call(id, ATR_OP_RING_REPORT, Payload(report)).status == 0);
  CHECK(f.store_->count(AgeClass::kHost) == 0);
  report.object_ids = {9};
  CHECK(f.Call(id, ATR_OP_RING_REPORT, Payload(report)).status == ATR_ENOENT);
  // A descriptor on a frame that takes none: refused, and the connection is to be closed.
  auto stray = call_with(ATR_OP_STATUS, {}, EmptyRing(), &close_after);
  CHECK(stray.status == ATR_EBADMSG);
  CHECK(close_after);
  // GOODBYE drops the rings; so does a disconnect.
  CHECK(f.Call(id, ATR_OP_GOODBYE, {}).status == 0);
  CHECK(f.service->rings() == 0);
  CHECK(f.Call(id, ATR_OP_GOODBYE, {}).status == ATR_EPROTO);
}

// ---- Death without GOODBYE ------------------------------------------------------------

namespace {

// An EmptyRing() holding `texts` as complete records 0..n-1.
UniqueFd RingWith(const std::vector<std::string>& texts) {
  UniqueFd fd = EmptyRing();
  const uint32_t slot = ATR_RING_SLOT_SIZE(64);
  uint64_t k = 0;
  for (const std::string& text : texts) {
    atr_ring_slot_head head{};
    head.seq_done = k + 1;
    head.timestamp_ns = 2 + k;
    head.length = static_cast<uint32_t>(text.size());
    const off_t at = static_cast<off_t>(ATR_RING_HEADER_SIZE + k * slot);
    const uint64_t seq_start = k + 1;
    REQUIRE(::pwrite(fd.get(), text.data(), text.size(), at + ATR_RING_SLOT_HEAD_SIZE) == static_cast<ssize_t>(text.size()));
    REQUIRE(::pwrite(fd.get(), &seq_start, 8, at + slot - 8) == 8);
    REQUIRE(::pwrite(fd.get(), &head, sizeof head, at) == static_cast<ssize_t>(sizeof head));
    ++k;
  }
  REQUIRE(::pwrite(fd.get(), &k, 8, ATR_RING_OFF_WRITE_INDEX) == 8);
  return fd;
}

struct RingClient {
  ServiceFixture& f;
  TraceService::ClientId id;

  RingClient(ServiceFixture& fixture, int32_t pid) : f(fixture) {
    id = f.service->Connect({pid, 1000, 1000});
    proto::Hello h;
    h.minor = 1;
    h.features = ATR_FEATURE_MEMFD;
    REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  }
  void Register(uint32_t object_id, UniqueFd fd, bool exit_save = false, const std::string& name = "") {
    proto::RingRegister m;
    m.object_id = object_id;
    m.msg_num = 4;
    m.msg_size = 64;
    m.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));
    m.name = name.empty() ? "obj" + std::to_string(object_id) : name;
    if (exit_save) m.flags = ATR_RING_EXIT_SAVE;
    auto payload = Payload(m);
    ReplyBatch batch;
    proto::FrameHeader fh{static_cast<uint32_t>(payload.size()), ATR_OP_RING_REGISTER, 0, ++f.request_id};
    f.service->Handle(id, fh, payload, batch, std::move(fd));
    REQUIRE(ServiceFixture::Decode(batch).at(0).status == 0);
  }
};

// Event dirs of `kind` under the fixture's trace dir.
std::vector<std::string> KindDirs(ServiceFixture& f, const std::string& kind) {
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

}  // namespace

TEST_CASE("a ring client that dies without GOODBYE leaves a stackcore dir with its rings", "[service][rings][death]") {
  ServiceFixture f;
  std::vector<std::chrono::milliseconds> scheduled;
  f.service->SetDepartureScheduler([&](std::chrono::milliseconds in) { scheduled.push_back(in); });
  f.processes.cmdlines[100] = std::string("./app --flag\n", 13);
  RingClient c(f, 100);
  c.Register(1, RingWith({"one", "two"}));
  c.Register(2, RingWith({"exit record"}), /*exit_save=*/true);
  c.Register(3, EmptyRing());
  // Destroyed exitSave objects are saved too.
  REQUIRE(f.Call(c.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{2})).status == 0);

  SECTION("killed: the zombie's status names the signal") {
    f.processes.ended[100] = ProcessEnd{true, SIGKILL};
    f.service->Disconnect(c.id);
    CHECK(f.service->departures() == 0);
    CHECK(f.service->rings() == 0);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(BaseName(dirs[0]).rfind("stackcore_event_100_", 0) == 0);
    auto names = ListNames(dirs[0]);
    REQUIRE(names.size() == 3);
    CHECK(names[0] == "schedule_tracer_obj1.txt");
    CHECK(names[1] == "schedule_tracer_obj2.txt");
    CHECK(names[2].rfind("stackcore_tracer_9_100_app_", 0) == 0);
    const std::string report = ReadFile(dirs[0] + "/" + names[2]);
    CHECK(report.find("how: killed by signal 9 (SIGKILL)") != std::string::npos);
    CHECK(report.find("command line: ./app --flag\\x0a") != std::string::npos);  // escaped, one line
    CHECK(report.find("rings: 3 (obj1, obj2 (destroyed, exitSave), obj3)") != std::string::npos);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("one\n") != std::string::npos);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("two\n") != std::string::npos);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj2.txt").find("exit record\n") != std::string::npos);
    CHECK(f.store_->count(AgeClass::kHost) == 1);  // a stackcore dir ages with the host class
    CHECK(f.service->counters().deaths_recorded == 1);
    CHECK(f.log.Has(LogLevel::kNotice, "ended without GOODBYE"));
    CHECK(scheduled.empty());
  }
  SECTION("_exit(3): no signal, the status is said") {
    f.processes.ended[100] = ProcessEnd{true, 3 << 8};
    f.service->Disconnect(c.id);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    auto names = ListNames(dirs[0]);
    REQUIRE(names.back().rfind("stackcore_tracer_0_100_app_", 0) == 0);
    CHECK(ReadFile(dirs[0] + "/" + names.back()).find("how: exited with status 3") != std::string::npos);
  }
  SECTION("reaped before the daemon looked: it says it cannot tell") {
    f.processes.processes.erase(100);
    f.service->Disconnect(c.id);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    auto names = ListNames(dirs[0]);
    CHECK(ReadFile(dirs[0] + "/" + names.back()).find("cannot tell") != std::string::npos);
  }
  SECTION("still exiting at the close: checked again until it has ended") {
    f.service->Disconnect(c.id);
    CHECK(f.service->departures() == 1);
    CHECK(f.service->rings() == 3);  // held meanwhile
    REQUIRE(scheduled.size() == 1);
    CHECK(scheduled[0] == std::chrono::milliseconds(5));
    f.service->CheckDepartures();
    CHECK(scheduled.back() == std::chrono::milliseconds(10));
    CHECK(KindDirs(f, "stackcore").empty());
    f.processes.ended[100] = ProcessEnd{true, SIGSEGV | 0x80};
    f.service->CheckDepartures();
    CHECK(f.service->departures() == 0);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    auto names = ListNames(dirs[0]);
    CHECK(names.back().rfind("stackcore_tracer_11_100_app_", 0) == 0);
    CHECK(ReadFile(dirs[0] + "/" + names.back()).find("killed by signal 11 (SIGSEGV), core dumped") != std::string::npos);
  }
  SECTION("still running after every check (an exec, a closed descriptor): rings dropped, nothing written") {
    f.service->Disconnect(c.id);
    for (int i = 0; i < 20 && f.service->departures() > 0; ++i) f.service->CheckDepartures();
    CHECK(f.service->departures() == 0);
    CHECK(f.service->rings() == 0);
    CHECK(KindDirs(f, "stackcore").empty());
    CHECK(f.log.Has(LogLevel::kInfo, "still running"));
    CHECK(scheduled.size() == 11);  // 12 checks; the last one schedules nothing more
  }
}

TEST_CASE("a SIGKILLed ring client's report says whether the OOM killer did it", "[service][rings][death][oom]") {
  ServiceFixture f;
  const std::string events = "/sys/fs/cgroup/app.slice/memory.events";
  f.processes.oom_at_hello[100] = OomCount{events, 3, ""};
  RingClient c(f, 100);
  c.Register(1, RingWith({"last words"}));
  auto report = [&f] {
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(ListNames(dirs[0]).front() == "schedule_tracer_obj1.txt");  // the rings are saved either way
    return ReadFile(dirs[0] + "/" + ListNames(dirs[0]).back());
  };
  SECTION("the count went up: the OOM killer") {
    f.processes.oom_now[events] = OomCount{events, 4, ""};
    f.processes.ended[100] = ProcessEnd{true, SIGKILL};
    f.service->Disconnect(c.id);
    const std::string text = report();
    INFO(text);
    CHECK(text.find("how: killed by signal 9 (SIGKILL)\noom: killed by the OOM killer (" + events +
                    " oom_kill went from 3 to 4)\n") != std::string::npos);
    CHECK(f.log.Has(LogLevel::kNotice, "; killed by the OOM killer"));
  }
  SECTION("the count stayed: not the OOM killer") {
    f.processes.oom_now[events] = OomCount{events, 3, ""};
    f.processes.ended[100] = ProcessEnd{true, SIGKILL};
    f.service->Disconnect(c.id);
    CHECK(report().find("oom: not by the OOM killer (" + events + " oom_kill stayed at 3)\n") != std::string::npos);
  }
  SECTION("unreadable at death: it cannot tell, and says why") {
    f.processes.oom_now[events] = OomCount{events, std::nullopt, events + " is not readable"};
    f.processes.processes.erase(100);  // reaped: the status is unknown too
    f.service->Disconnect(c.id);
    const std::string text = report();
    CHECK(text.find("oom: cannot tell whether the OOM killer did it (" + events + " is not readable)\n") !=
          std::string::npos);
    CHECK(f.log.Has(LogLevel::kNotice, "cannot tell whether the OOM killer"));
  }
  SECTION("an end the status explains has no oom line") {
    f.processes.ended[100] = ProcessEnd{true, 3 << 8};
    f.service->Disconnect(c.id);
    CHECK(report().find("oom:") == std::string::npos);
  }
}

TEST_CASE("no stackcore dir after GOODBYE, without rings, or for a 1.0 connection", "[service][rings][death]") {
  ServiceFixture f;
  f.processes.ended[100] = ProcessEnd{true, SIGKILL};
  f.processes.ended[200] = ProcessEnd{true, SIGKILL};
  RingClient bye(f, 100);
  bye.Register(1, RingWith({"saved at exit"}), /*exit_save=*/true);
  REQUIRE(f.Call(bye.id, ATR_OP_GOODBYE, {}).status == 0);
  f.service->Disconnect(bye.id);
  RingClient empty(f, 200);
  f.service->Disconnect(empty.id);
  auto plain = f.Client(200);
  f.service->Disconnect(plain);
  CHECK(KindDirs(f, "stackcore").empty());
  CHECK(KindDirs(f, "exit").size() == 1);
  CHECK(f.service->departures() == 0);
  CHECK(f.service->HoldsRings(bye.id) == false);
}

TEST_CASE("rings with no record still leave the report", "[service][rings][death]") {
  ServiceFixture f;
  f.processes.ended[100] = ProcessEnd{true, SIGKILL};
  RingClient c(f, 100);
  c.Register(1, EmptyRing());
  CHECK(f.service->HoldsRings(c.id));
  f.service->Disconnect(c.id);
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  auto names = ListNames(dirs[0]);
  REQUIRE(names.size() == 1);
  CHECK(names[0].rfind("stackcore_tracer_9_100_app_", 0) == 0);
}

TEST_CASE("a daemon that stops with departures pending writes nothing and frees them", "[service][rings][death]") {
  ServiceFixture f;
  RingClient c(f, 100);
  c.Register(1, RingWith({"x"}));
  f.service->Disconnect(c.id);  // process 100 is still listed: pending
  REQUIRE(f.service->departures() == 1);
  f.service.reset();
  CHECK(KindDirs(f, "stackcore").empty());
}

TEST_CASE("the rate limit refuses a process's events over its burst with EAGAIN, exit events have their own bucket",
          "[service][rate]") {
  ServiceOptions o;
  o.rate_limit = RateLimit{std::chrono::seconds(10), 3};
  ServiceFixture f(o);
  auto a = f.Client(100);
  auto a2 = f.Client(100);  // the same process on a second connection shares its buckets
  auto b = f.Client(200);
  int32_t status = 0;
  std::string message;
  CHECK_FALSE(f.Begin(a, 1).empty());
  CHECK_FALSE(f.Begin(a2, 2).empty());
  CHECK_FALSE(f.Begin(a, 3).empty());
  CHECK(f.Begin(a2, 4, ATR_SIDE_HOST, 0, &status, &message).empty());
  CHECK(status == ATR_EAGAIN);
  CHECK(message.find("rate-limit-burst 3") != std::string::npos);
  CHECK(f.Begin(a, 5, ATR_SIDE_HOST, 0, &status).empty());
  CHECK(f.service->counters().refused_rate_limit == 2);
  // Another process is not affected.
  CHECK_FALSE(f.Begin(b, 1).empty());
  // Exit events still go through: their bucket is another.
  auto exit_req = BeginRequest(9, ATR_EVENT_EXIT);
  CHECK(f.Call(a, ATR_OP_EVENT_BEGIN, Payload(exit_req)).status == 0);
  // Refusals are not logged one by one; the tick sums them up once the interval passed.
  CHECK_FALSE(f.log.Has(LogLevel::kNotice, "refused EVENT_BEGIN"));
  f.service->Tick();
  CHECK_FALSE(f.log.Has(LogLevel::kWarning, "suppressed"));
  f.clock.Advance(std::chrono::seconds(11));
  f.service->Tick();
  CHECK(f.log.Has(LogLevel::kWarning, "suppressed 2 events from pid 100 (app)"));
  // Refilled: the process may create events again.
  CHECK_FALSE(f.Begin(a, 6).empty());
}

namespace {
// A FILE_APPEND of `n` bytes to file id 1.
std::vector<uint8_t> Append1(size_t n) {
  static const std::string data(4096, 'x');
  return Payload(proto::FileAppend{1, {reinterpret_cast<const uint8_t*>(data.data()), n}});
}
}  // namespace

TEST_CASE("max-bytes-per-client refuses the append that would pass it with EBUSY", "[service][rate]") {
  ServiceOptions o;
  o.max_bytes_per_client = 100;
  ServiceFixture f(o);
  auto a = f.Client(100);
  REQUIRE_FALSE(f.Begin(a, 1).empty());
  REQUIRE(f.Call(a, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "obj"))).status == 0);
  CHECK(f.Call(a, ATR_OP_FILE_APPEND, Append1(60)).status == 0);
  auto r = f.Call(a, ATR_OP_FILE_APPEND, Append1(41));
  CHECK(r.status == ATR_EBUSY);
  CHECK(r.message.find("max-bytes-per-client 100") != std::string::npos);
  CHECK(f.Call(a, ATR_OP_FILE_APPEND, Append1(40)).status == 0);
  CHECK(f.service->counters().refused_client_bytes == 1);
  // A second connection of the same process shares the bound.
  auto a2 = f.Client(100);
  REQUIRE_FALSE(f.Begin(a2, 1).empty());
  REQUIRE(f.Call(a2, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "obj2"))).status == 0);
  CHECK(f.Call(a2, ATR_OP_FILE_APPEND, Append1(1)).status == ATR_EBUSY);
}

TEST_CASE("new per-client limits apply at once", "[service][rate]") {
  ServiceFixture f;
  auto a = f.Client(100);
  f.service->SetClientLimits(RateLimit{std::chrono::seconds(60), 1}, 0);
  CHECK_FALSE(f.Begin(a, 1).empty());
  int32_t status = 0;
  CHECK(f.Begin(a, 2, ATR_SIDE_HOST, 0, &status).empty());
  CHECK(status == ATR_EAGAIN);
  f.service->SetClientLimits(RateLimit{std::chrono::seconds(0), 1}, 0);
  CHECK_FALSE(f.Begin(a, 3).empty());
}

namespace {

// Says what a real inspector would, and what it was asked.
class FakeCrashInspector final : public CrashInspector {
 public:
  CrashFacts Inspect(const CrashTarget& target, std::chrono::milliseconds budget) override {
    asked.push_back({target.pid, target.tid});
    last_budget = budget;
    return {"100 app\n101 worker\n", "#0   0x0000000000401136 crash_here+0x6 /usr/bin/app\n", "00400000-00401000 r-xp app\n"};
  }
  std::vector<std::pair<pid_t, pid_t>> asked;
  std::chrono::milliseconds last_budget{0};
};

// A connection that asked for CRASH (the library's second connection, holding no ring).
TraceService::ClientId CrashChannel(ServiceFixture& f, int32_t pid, uint64_t features = ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH) {
  auto id = f.service->Connect({pid, 1000, 1000});
  proto::Hello h;
  h.minor = 1;
  h.features = features;
  REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  return id;
}

}  // namespace

namespace {

// Process `pid` (program `program`) holds a ring and sends CRASH, which must succeed; returns
// the unwind deadline the inspector was given.
std::chrono::milliseconds CrashWithRing(ServiceFixture& f, FakeCrashInspector& inspector, int32_t pid,
                                        const char* program) {
  f.processes.processes[pid] = {pid, static_cast<uint64_t>(pid) * 10, program, {}};
  RingClient rings(f, pid);
  rings.Register(1, RingWith({"r"}));
  REQUIRE(f.Call(CrashChannel(f, pid), ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, pid, 0})).status == 0);
  return inspector.last_budget;
}

}  // namespace

TEST_CASE("CRASH writes the stackcore dir while the process waits, once", "[service][rings][crash]") {
  FakeCrashInspector inspector;
  ServiceOptions o;
  o.crash_inspector = &inspector;
  o.crash_budget = std::chrono::milliseconds(1234);
  ServiceFixture f(o);
  f.processes.cmdlines[100] = "./app --run";
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"before the crash"}));
  const auto channel = CrashChannel(f, 100);
  CHECK((f.service->features(channel) & ATR_FEATURE_CRASH) != 0);

  const auto r = f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 101, 0x10}));
  REQUIRE(r.status == 0);
  CHECK(inspector.asked == std::vector<std::pair<pid_t, pid_t>>{{100, 101}});
  CHECK(inspector.last_budget == std::chrono::milliseconds(1234));
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  auto names = ListNames(dirs[0]);
  REQUIRE(names.size() == 2);
  CHECK(names[0] == "schedule_tracer_obj1.txt");
  REQUIRE(names[1].rfind("stackcore_tracer_11_101_app_", 0) == 0);
  const std::string report = ReadFile(dirs[0] + "/" + names[1]);
  INFO(report);
  CHECK(report.find("signal: 11 (SIGSEGV)\n") != std::string::npos);
  CHECK(report.find("code: 1 (SEGV_MAPERR)\n") != std::string::npos);
  CHECK(report.find("fault address: 0x0000000000000010\n") != std::string::npos);
  CHECK(report.find("thread: 101\n") != std::string::npos);
  CHECK(report.find("command line: ./app --run\n") != std::string::npos);
  CHECK(report.find("crash_here+0x6") != std::string::npos);
  CHECK(report.find("101 worker") != std::string::npos);
  CHECK(report.find("r-xp app") != std::string::npos);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("before the crash\n") != std::string::npos);
  CHECK(f.service->counters().crashes_recorded == 1);

  // A second CRASH (another thread) is refused; the process's death writes no second dir.
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGABRT, -6, 100, 0})).status == ATR_EEXIST);
  f.processes.ended[100] = ProcessEnd{true, SIGSEGV};
  f.service->Disconnect(channel);
  f.service->Disconnect(rings.id);
  CHECK(KindDirs(f, "stackcore").size() == 1);
  CHECK(f.service->counters().deaths_recorded == 0);
  CHECK(f.service->departures() == 0);
  CHECK(f.service->rings() == 0);
}

TEST_CASE("CRASH: a new unwind deadline applies to the next crash (SIGHUP)", "[service][rings][crash]") {
  FakeCrashInspector inspector;
  ServiceOptions o;
  o.crash_inspector = &inspector;
  o.crash_budget = std::chrono::milliseconds(1234);
  ServiceFixture f(o);
  auto crash = [&](int32_t pid) { return CrashWithRing(f, inspector, pid, "app"); };
  CHECK(crash(1001) == std::chrono::milliseconds(1234));
  f.service->SetCrashBudget(std::chrono::milliseconds(250));
  CHECK(crash(1002) == std::chrono::milliseconds(250));
}

TEST_CASE("CRASH without the feature or without rings is refused with a reason", "[service][rings][crash]") {
  ServiceFixture f;  // no inspector: the report says so, the rings are still written
  const auto crash = Payload(proto::Crash{SIGSEGV, 1, 100, 0});
  SECTION("a 1.0 connection, and CRASH asked for without MEMFD, do not get it") {
    const auto plain = f.Client(100);
    const auto r = f.Call(plain, ATR_OP_CRASH, crash);
    CHECK(r.status == ATR_ENOTSUP);
    CHECK(r.message.find("ATR_FEATURE_CRASH") != std::string::npos);
    const auto no_memfd = CrashChannel(f, 100, ATR_FEATURE_CRASH);
    CHECK(f.service->features(no_memfd) == 0);
    CHECK(f.Call(no_memfd, ATR_OP_CRASH, crash).status == ATR_ENOTSUP);
  }
  SECTION("no connection of the process holds a ring") {
    RingClient other(f, 200);  // another process's rings do not count
    other.Register(1, RingWith({"theirs"}));
    const auto channel = CrashChannel(f, 100);
    const auto r = f.Call(channel, ATR_OP_CRASH, crash);
    CHECK(r.status == ATR_ENOENT);
    CHECK(r.message.find("holds a ring") != std::string::npos);
    CHECK(KindDirs(f, "stackcore").empty());
  }
  SECTION("the rings' own connection may send it; no inspector is said in the report") {
    RingClient c(f, 100);
    c.Register(1, RingWith({"x"}));
    REQUIRE(f.Call(c.id, ATR_OP_CRASH, crash).status == ATR_ENOTSUP);  // MEMFD alone is not CRASH
    const auto channel = CrashChannel(f, 100);
    REQUIRE(f.Call(channel, ATR_OP_CRASH, crash).status == 0);
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(ReadFile(dirs[0] + "/" + ListNames(dirs[0]).back()).find("no unwinder") != std::string::npos);
  }
  SECTION("a malformed CRASH is refused by the decoder") {
    const auto channel = CrashChannel(f, 100);
    CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{0, 1, 100, 0})).status == ATR_EINVAL);
  }
}

TEST_CASE("CRASH: one uid gets a bounded number of unwinds a minute", "[service][rings][crash]") {
  FakeCrashInspector inspector;
  ServiceOptions o;
  o.crash_inspector = &inspector;
  o.crash_unwinds_per_uid_per_minute = 2;
  ServiceFixture f(o);
  auto crash = [&](int32_t pid) { return CrashWithRing(f, inspector, pid, "looper"); };
  CHECK(crash(1001) == std::chrono::milliseconds(2000));
  CHECK(crash(1002) == std::chrono::milliseconds(2000));
  CHECK(crash(1003) == std::chrono::milliseconds(0));  // the third within the minute: no unwind
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 3);
  bool said_why = false;
  for (const auto& dir : dirs) {
    said_why = said_why || ReadFile(dir + "/" + ListNames(dir).back()).find("crashes unwound in the last minute") !=
                               std::string::npos;
  }
  CHECK(said_why);
  f.clock.Advance(std::chrono::minutes(1));
  CHECK(crash(1004) == std::chrono::milliseconds(2000));  // a minute later, again
}

TEST_CASE("DUMP saves the process's unreleased rings as a schedule dir and keeps them", "[service][rings][dump]") {
  ServiceFixture f;
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"before the signal"}));
  rings.Register(2, RingWith({"destroyed"}), /*exit_save=*/true);
  rings.Register(3, EmptyRing());
  REQUIRE(f.Call(rings.id, ATR_OP_RING_RELEASE, Payload(proto::IdRequest{2})).status == 0);
  const auto channel = CrashChannel(f, 100);
  const auto dump = Payload(proto::Dump{35, 101});

  REQUIRE(f.Call(channel, ATR_OP_DUMP, dump).status == 0);
  auto dirs = KindDirs(f, "schedule");
  REQUIRE(dirs.size() == 1);
  // RING_SAVE_ALL's files: the live rings with a record; the destroyed exitSave one waits for exit.
  CHECK(ListNames(dirs[0]) == std::vector<std::string>{"schedule_tracer_obj1.txt"});
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("before the signal\n") != std::string::npos);
  CHECK(f.log.Has(LogLevel::kInfo, "caught dump signal 35"));
  CHECK(KindDirs(f, "stackcore").empty());
  // Not a crash: it may come again, the records are still there, and a later CRASH is not refused.
  f.clock.Advance(std::chrono::milliseconds(2));
  REQUIRE(f.Call(channel, ATR_OP_DUMP, dump).status == 0);
  CHECK(KindDirs(f, "schedule").size() == 2);
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 100, 0})).status == 0);
}

TEST_CASE("DUMP without the feature or without rings is refused with a reason", "[service][rings][dump]") {
  ServiceFixture f;
  const auto dump = Payload(proto::Dump{35, 100});
  SECTION("MEMFD alone is not CRASH") {
    RingClient c(f, 100);
    c.Register(1, RingWith({"x"}));
    const auto r = f.Call(c.id, ATR_OP_DUMP, dump);
    CHECK(r.status == ATR_ENOTSUP);
    CHECK(r.message.find("DUMP: ATR_FEATURE_CRASH") != std::string::npos);
  }
  SECTION("no connection of the process holds an unreleased ring") {
    RingClient other(f, 200);
    other.Register(1, RingWith({"theirs"}));
    const auto r = f.Call(CrashChannel(f, 100), ATR_OP_DUMP, dump);
    CHECK(r.status == ATR_ENOENT);
    CHECK(r.message.find("unreleased ring") != std::string::npos);
    CHECK(KindDirs(f, "schedule").empty());
  }
  SECTION("a malformed DUMP is refused by the decoder") {
    CHECK(f.Call(CrashChannel(f, 100), ATR_OP_DUMP, Payload(proto::Dump{35, 0})).status == ATR_EINVAL);
  }
  SECTION("signals sent faster than the schedule rate limit are refused, like any save") {
    f.service->SetClientLimits(RateLimit{std::chrono::seconds(60), 1}, 0);
    RingClient c(f, 100);
    c.Register(1, RingWith({"x"}));
    const auto channel = CrashChannel(f, 100);
    CHECK(f.Call(channel, ATR_OP_DUMP, dump).status == 0);
    CHECK(f.Call(channel, ATR_OP_DUMP, dump).status == ATR_EAGAIN);
    CHECK(KindDirs(f, "schedule").size() == 1);
  }
}

namespace {

// Keeps the runner's jobs until the test finishes them: the event loop's view of a crash
// inspected on another thread.
class FakeCrashRunner final : public CrashRunner {
 public:
  void Run(std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) override {
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

struct DeferredCrash {
  FakeCrashInspector inspector;
  FakeCrashRunner runner;
  std::unique_ptr<ServiceFixture> f;
  std::vector<ReplyBatch> delivered;  // through the CRASH connection's reply sink

  DeferredCrash() {
    ServiceOptions o;
    o.crash_inspector = &inspector;
    o.crash_runner = &runner;
    f = std::make_unique<ServiceFixture>(o);
  }
  // Sends CRASH on `channel`: no reply now, the request deferred.
  void Crash(TraceService::ClientId channel, int32_t pid) {
    f->service->SetReplySink(channel, [this](ReplyBatch&& b) { delivered.push_back(std::move(b)); });
    ReplyBatch batch;
    const auto payload = Payload(proto::Crash{SIGSEGV, 1, pid + 1, 0x10});
    proto::FrameHeader h{static_cast<uint32_t>(payload.size()), ATR_OP_CRASH, 0, 77};
    f->service->Handle(channel, h, payload, batch);
    CHECK(batch.deferred);
    CHECK(batch.bytes.empty());
  }
};

}  // namespace

TEST_CASE("CRASH with a runner: others are served while it is inspected, then the reply comes", "[service][rings][crash]") {
  DeferredCrash t;
  ServiceFixture& f = *t.f;
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"before the crash"}));
  const auto channel = CrashChannel(f, 100);
  t.Crash(channel, 100);
  REQUIRE(t.runner.jobs.size() == 1);
  CHECK(t.inspector.asked.empty());  // not on the loop: the runner has not run it yet
  CHECK(KindDirs(f, "stackcore").empty());

  // Another client is served meanwhile.
  const auto other = f.Client(200);
  CHECK(f.Call(other, ATR_OP_STATUS, {}).status == 0);

  t.runner.FinishAll();
  CHECK(t.inspector.asked == std::vector<std::pair<pid_t, pid_t>>{{100, 101}});
  REQUIRE(t.delivered.size() == 1);
  const auto replies = ServiceFixture::Decode(t.delivered[0]);
  REQUIRE(replies.size() == 1);
  CHECK(replies[0].header.opcode == ATR_OP_CRASH);
  CHECK(replies[0].header.request_id == 77u);
  CHECK(replies[0].header.flags == ATR_FLAG_REPLY);
  CHECK(replies[0].status == 0);
  auto dirs = KindDirs(f, "stackcore");
  REQUIRE(dirs.size() == 1);
  CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("before the crash\n") != std::string::npos);
  const std::string report = ReadFile(dirs[0] + "/" + ListNames(dirs[0]).back());
  CHECK(report.find("crash_here+0x6") != std::string::npos);
  CHECK(f.service->counters().crashes_recorded == 1);
  // A second CRASH of the same process is refused at once, deferred or not.
  CHECK(f.Call(channel, ATR_OP_CRASH, Payload(proto::Crash{SIGABRT, -6, 100, 0})).status == ATR_EEXIST);
}

TEST_CASE("CRASH with a runner: the rings outlive their connection until the report is written", "[service][rings][crash]") {
  DeferredCrash t;
  ServiceFixture& f = *t.f;
  RingClient rings(f, 100);
  rings.Register(1, RingWith({"last words"}));
  const auto channel = CrashChannel(f, 100);
  t.Crash(channel, 100);

  SECTION("the rings' connection closes first") {
    f.processes.ended[100] = ProcessEnd{true, SIGSEGV};
    f.service->Disconnect(rings.id);
    CHECK(KindDirs(f, "stackcore").empty());
    t.runner.FinishAll();
    auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(ReadFile(dirs[0] + "/schedule_tracer_obj1.txt").find("last words\n") != std::string::npos);
    CHECK(t.delivered.size() == 1);
    CHECK(f.service->rings() == 0);  // released once written
    CHECK(f.service->counters().deaths_recorded == 0);  // and no second dir for the death
  }
  SECTION("the CRASH connection closes first: the report is written, no reply is sent") {
    f.service->Disconnect(channel);
    t.runner.FinishAll();
    CHECK(KindDirs(f, "stackcore").size() == 1);
    CHECK(t.delivered.empty());
  }
  SECTION("both close, then the service goes: nothing is left to call") {
    f.service->Disconnect(channel);
    f.service->Disconnect(rings.id);
    auto late = std::move(t.runner.jobs);
    t.f.reset();  // the daemon stops before the inspection returns; its `done` is never run
    CHECK(late.size() == 1);
  }
}
