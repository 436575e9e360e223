// The service without a socket, for the tests of each of its rooms: a TraceStore on a temp
// dir behind a fault-injecting file system, a fake process table and clock, and Call(),
// which sends one request frame and decodes its reply.
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atraced/service/trace_service.h"
#include "atraced/store/posix_file_system.h"
#include "atraced/proto/frame_decoder.h"
#include "atraced/proto/ring_layout.h"
#include "support/capture_log.h"
#include "support/fake_clock.h"
#include "support/fake_process_table.h"
#include "support/fault_file_system.h"
#include "support/inline_runners.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

namespace atraced::testing {

struct Reply {
  proto::FrameHeader header;
  int32_t status;
  std::string message;
  std::vector<uint8_t> body;
};

class ServiceFixture {
 public:
  // `deps` names what a test gives the service (an inspector, a runner); the fixture adds
  // the store, the process table, the clock and the log, and runners that finish at once
  // (inline_runners.h) where the test gives none.
  explicit ServiceFixture(ServiceLimits limits = {}, TraceService::Dependencies deps = {}) {
    auto fs = PosixFileSystem::Open(tmp.path());
    REQUIRE(fs.ok());
    fs_ = std::move(*fs);
    fault_ = std::make_unique<FaultFileSystem>(*fs_);
    remover_ = std::make_unique<InlineRemover>(*fault_);
    store_ = std::make_unique<TraceStore>(*fault_, *remover_, clock, log.logger(), refusals, 10);
    REQUIRE(store_->Recover().ok());
    limits.root = tmp.path();
    if (limits.daemon_uid == 0) limits.daemon_uid = 4242;
    processes.processes[100] = {100, 1111, "app", {}, {}};
    processes.processes[200] = {200, 2222, "other", {}, {}};
    processes.processes[300] = {300, 3333, "fwd", {777}, {}};
    deps.store = store_.get();
    deps.processes = &processes;
    deps.clock = &clock;
    deps.log = &log.logger();
    if (deps.io_runner == nullptr) deps.io_runner = &io_runner;
    if (deps.crash_runner == nullptr) deps.crash_runner = &crash_runner;
    service = std::make_unique<TraceService>(std::move(deps), std::move(limits));
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
      REQUIRE(proto::DecodeReply(payload, &head).ok());
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

  // A client whose HELLO asked for `features` (and was granted all of them).
  TraceService::ClientId ClientWith(int32_t pid, uint32_t uid, uint64_t features) {
    auto id = service->Connect({pid, uid, uid});
    proto::Hello h;
    h.features = features;
    REQUIRE(Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
    CHECK((service->features(id) & features) == features);
    return id;
  }

  // A whole event with one empty file in it (an event with no file leaves no directory):
  // begun, the file opened and closed, ended. Returns the event's directory.
  std::string Event(TraceService::ClientId id, uint32_t event_id) {
    std::string dir = Begin(id, event_id);
    REQUIRE(!dir.empty());
    const uint32_t file_id = 100000 + event_id;
    REQUIRE(Call(id, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(event_id, file_id, "x"))).status == 0);
    REQUIRE(Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{file_id})).status == 0);
    REQUIRE(Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{event_id})).status == 0);
    return dir;
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
    REQUIRE(proto::Decode(r.body, &p).ok());
    return p.path;
  }

  TempDir tmp;
  InlineIoRunner io_runner;
  InlineCrashRunner crash_runner;
  FakeClock clock;
  CaptureLog log;
  RefusalLog refusals;
  FakeProcessTable processes;
  std::unique_ptr<PosixFileSystem> fs_;
  std::unique_ptr<FaultFileSystem> fault_;
  std::unique_ptr<InlineRemover> remover_;
  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TraceService> service;
  uint32_t request_id = 0;
};

// What SIGHUP applies (TraceService::ApplyLimits): a rate limit, max-bytes-per-client and
// the crash budget; the rest as the defaults.
inline ServiceLimits Limits(RateLimit rate_limit, uint64_t max_bytes_per_client,
                            std::chrono::milliseconds crash_budget = ServiceLimits{}.crash_budget) {
  ServiceLimits limits;
  limits.rate_limit = rate_limit;
  limits.max_bytes_per_client = max_bytes_per_client;
  limits.crash_budget = crash_budget;
  return limits;
}

inline std::string DirName(const std::string& path) { return path.substr(0, path.rfind('/')); }
inline std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// A FILE_APPEND of `n` bytes to file id 1.
inline std::vector<uint8_t> Append1(size_t n) {
  static const std::string data(4096, 'x');
  return Payload(proto::FileAppend{1, {reinterpret_cast<const uint8_t*>(data.data()), n}});
}

}  // namespace atraced::testing
