// Session over an in-process socket pair: no path, no daemon binary, real Asio on its own
// thread (the request handler runs there too, as in the daemon).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "atraced/store/posix_file_system.h"
#include "atraced/ipc/session.h"
#include "support/inline_runners.h"
#include "support/capture_log.h"
#include "support/fake_clock.h"
#include "support/fake_process_table.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

// Thread-safe log capture: sessions and the store log from the I/O thread, tests read here.
class SharedLog {
 public:
  SharedLog()
      : logger_([this](LogLevel, std::string_view t) {
          std::lock_guard<std::mutex> g(mu_);
          text_ += std::string(t) + "\n";
        }, LogLevel::kDebug) {}
  Logger& logger() { return logger_; }
  std::string text() {
    std::lock_guard<std::mutex> g(mu_);
    return text_;
  }
  bool Has(const std::string& needle) {
    std::lock_guard<std::mutex> g(mu_);
    return text_.find(needle) != std::string::npos;
  }
  bool WaitFor(const std::string& needle) {
    for (int i = 0; i < 500; ++i) {
      if (Has(needle)) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::string text_;
  Logger logger_;
};

// What the service needs, for a session over a real socket. The runners finish at once and
// keep nothing: one of each serves every test.
TraceService::Dependencies Deps(TraceStore& store, ProcessTable& processes, Clock& clock, Logger& log) {
  static InlineIoRunner io_runner;
  static InlineCrashRunner crash_runner;
  TraceService::Dependencies deps;
  deps.io_runner = &io_runner;
  deps.crash_runner = &crash_runner;
  deps.store = &store;
  deps.processes = &processes;
  deps.clock = &clock;
  deps.log = &log;
  return deps;
}

class SessionFixture {
 public:
  explicit SessionFixture(std::chrono::seconds idle = 30s) {
    auto fs = PosixFileSystem::Open(tmp.path());
    REQUIRE(fs.ok());
    fs_ = std::move(*fs);
    remover_ = std::make_unique<InlineRemover>(*fs_);
    store_ = std::make_unique<TraceStore>(*fs_, *remover_, clock, log.logger(), refusals, 10);
    REQUIRE(store_->Recover().ok());
    processes.processes[::getpid()] = {::getpgid(0), 1, "self", {}, {}};
    ServiceLimits o;
    o.root = tmp.path();
    service_ = std::make_unique<TraceService>(Deps(*store_, processes, clock, log.logger()), o);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    LocalSocket server(io);
    server.assign(asio::local::stream_protocol(), sv[0]);
    client.emplace(UniqueFd(sv[1]));
    session_ = std::make_shared<Session>(std::move(server), *service_, log.logger(), idle,
                                         [this](Session*) { closed = true; });
    session_->Start();
    session_.reset();  // the session keeps itself alive while it has work
    io_thread = std::thread([this] { io.run(); });
  }
  ~SessionFixture() {
    io_work.reset();
    io.stop();
    io_thread.join();
  }

  TempDir tmp;
  FakeClock clock;
  SharedLog log;
  RefusalLog refusals;
  FakeProcessTable processes;
  std::unique_ptr<PosixFileSystem> fs_;
  std::unique_ptr<InlineRemover> remover_;
  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TraceService> service_;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> io_work = asio::make_work_guard(io);
  std::shared_ptr<Session> session_;
  std::optional<RawClient> client;
  std::atomic<bool> closed{false};
  // The session's on-close callback runs just after the socket is closed.
  bool WaitClosed() {
    for (int i = 0; i < 500 && !closed; ++i) std::this_thread::sleep_for(10ms);
    return closed;
  }
  std::thread io_thread;
};

}  // namespace

TEST_CASE("a whole event pipelined in one write gets its replies in order", "[session]") {
  SessionFixture f;
  RawClient& c = *f.client;
  proto::Hello h;
  h.features = ATR_FEATURE_FD_PASSING;
  c.Queue(ATR_OP_HELLO, Payload(h));
  proto::EventBegin b = BeginRequest(1);
  c.Queue(ATR_OP_EVENT_BEGIN, Payload(b));
  proto::FileOpen o = ObjectFileRequest(1, 1, "pipe");
  c.Queue(ATR_OP_FILE_OPEN, Payload(o));
  std::string data = "one round trip\n";
  c.Queue(ATR_OP_FILE_APPEND, Payload(proto::FileAppend{1, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}}));
  c.Queue(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}));
  c.Queue(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}));
  REQUIRE(c.Flush());
  const uint16_t ops[] = {ATR_OP_HELLO, ATR_OP_EVENT_BEGIN, ATR_OP_FILE_OPEN, ATR_OP_FILE_APPEND, ATR_OP_FILE_CLOSE, ATR_OP_EVENT_END};
  std::string path;
  for (uint32_t i = 0; i < 6; ++i) {
    auto r = c.Read();
    REQUIRE(r);
    CHECK(r->status == 0);
    CHECK(r->header.request_id == i + 1);
    CHECK(r->header.opcode == ops[i]);
    if (r->header.opcode == ATR_OP_FILE_OPEN) {
      proto::PathReply p;
      REQUIRE(proto::Decode(r->body, &p).ok());
      path = p.path;
    }
  }
  CHECK(ReadFile(path) == data);
}

TEST_CASE("a descriptor crosses the socket pair with its reply", "[session]") {
  SessionFixture f;
  RawClient& c = *f.client;
  REQUIRE(c.Hello());
  proto::EventBegin b = BeginRequest(1);
  proto::FileOpen o = ObjectFileRequest(1, 1, "fd");
  c.Queue(ATR_OP_EVENT_BEGIN, Payload(b));
  c.Queue(ATR_OP_FILE_OPEN, Payload(o));
  c.Queue(ATR_OP_STATUS, {});
  c.Queue(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}));
  REQUIRE(c.Flush());
  for (int i = 0; i < 3; ++i) REQUIRE(c.Read()->status == 0);
  auto r = c.Read();
  REQUIRE(r);
  REQUIRE(r->status == 0);
  REQUIRE(c.fds().size() == 1);
  CHECK(::write(c.fds().front().get(), "x", 1) == 1);
}

TEST_CASE("garbage closes the connection and names the peer", "[session]") {
  SessionFixture f;
  std::vector<uint8_t> junk(64, 0x5a);
  REQUIRE(f.client->SendRaw(junk));
  CHECK(f.client->SeesHangUp());
  CHECK(f.log.WaitFor("closing connection of pid " + std::to_string(::getpid())));
  CHECK(f.log.Has("protocol violation: bad magic"));
}

TEST_CASE("a frame split into single bytes is still one request", "[session]") {
  SessionFixture f;
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, ATR_OP_HELLO, 0, 9, Payload(proto::Hello{}));
  for (uint8_t byte : frame) {
    REQUIRE(f.client->SendRaw({byte}));
    std::this_thread::sleep_for(1ms);
  }
  auto r = f.client->Read();
  REQUIRE(r);
  CHECK(r->status == 0);
  CHECK(r->header.request_id == 9);
}

TEST_CASE("a silent client is dropped at the idle deadline", "[session]") {
  SessionFixture f(1s);
  CHECK(f.client->SeesHangUp(5s));
  CHECK(f.log.WaitFor("dropping idle connection"));
}

TEST_CASE("a hang-up mid-event ends the event in the service", "[session]") {
  SessionFixture f;
  REQUIRE(f.client->Hello());
  proto::EventBegin b = BeginRequest(1);
  REQUIRE(f.client->Call(ATR_OP_EVENT_BEGIN, Payload(b))->status == 0);
  f.client.reset();
  CHECK(f.log.WaitFor("disconnected with 1 open event(s)"));
}

TEST_CASE("a request trickled in byte by byte is dropped at the deadline", "[session]") {
  SessionFixture f(1s);
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, ATR_OP_HELLO, 0, 1, Payload(proto::Hello{}));
  // One byte every 300 ms: the connection is never silent, but the request never completes.
  bool hung_up = false;
  for (size_t i = 0; i + 1 < frame.size() && !hung_up; ++i) {
    f.client->SendRaw({frame[i]});
    hung_up = f.client->SeesHangUp(300ms);
  }
  CHECK(hung_up);
  CHECK(f.log.WaitFor("a request was not completed within 1 s"));
  CHECK(f.WaitClosed());
}

TEST_CASE("a client that never reads its replies is dropped and its event ended", "[session]") {
  SessionFixture f(1s);
  REQUIRE(f.client->Hello());
  REQUIRE(f.client->Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(1)))->status == 0);
  // Pipeline STATUS requests without reading: the daemon's replies fill the socket, it
  // stops reading, and the deadline ends the session.
  std::vector<uint8_t> burst;
  for (uint32_t i = 0; i < 20000; ++i) proto::AppendFrame(burst, ATR_OP_STATUS, 0, 100 + i, {});
  size_t off = 0;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (off < burst.size() && std::chrono::steady_clock::now() < until && !f.closed) {
    ssize_t n = ::send(f.client->fd(), burst.data() + off, burst.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) off += static_cast<size_t>(n);
    else std::this_thread::sleep_for(10ms);
  }
  CHECK(f.log.WaitFor("did not read its replies within 1 s"));
  CHECK(f.log.WaitFor("disconnected with 1 open event(s)"));
  CHECK(f.WaitClosed());
}

TEST_CASE("sessions take turns: a burst from one client does not hold up another", "[session][fairness]") {
  // No I/O thread here: the test steps the loop itself, so the order is deterministic.
  TempDir tmp;
  FakeClock clock;
  SharedLog log;
  RefusalLog refusals;
  FakeProcessTable processes;
  auto fs = PosixFileSystem::Open(tmp.path());
  REQUIRE(fs.ok());
  InlineRemover remover(**fs);
  TraceStore store(**fs, remover, clock, log.logger(), refusals, 10);
  REQUIRE(store.Recover().ok());
  ServiceLimits o;
  o.root = tmp.path();
  TraceService service(Deps(store, processes, clock, log.logger()), o);
  asio::io_context io;
  auto open = [&](std::optional<RawClient>& client) {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    LocalSocket server(io);
    server.assign(asio::local::stream_protocol(), sv[0]);
    client.emplace(UniqueFd(sv[1]));
    auto s = std::make_shared<Session>(std::move(server), service, log.logger(), 30s, nullptr);
    s->Start();
  };
  std::optional<RawClient> busy, quiet;
  open(busy);
  open(quiet);
  constexpr uint32_t kBurst = 400;
  std::vector<uint8_t> burst;
  proto::AppendFrame(burst, ATR_OP_HELLO, 0, 1, Payload(proto::Hello{}));
  for (uint32_t i = 0; i < kBurst; ++i) proto::AppendFrame(burst, ATR_OP_STATUS, 0, 2 + i, {});
  REQUIRE(busy->SendRaw(burst));
  std::vector<uint8_t> one;
  proto::AppendFrame(one, ATR_OP_HELLO, 0, 1, Payload(proto::Hello{}));
  REQUIRE(quiet->SendRaw(one));
  // Step the loop until the quiet client's reply is there, then count the busy one's.
  auto readable = [](int fd) {
    char c;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
  };
  for (int i = 0; i < 10000 && !readable(quiet->fd()); ++i) io.run_one_for(100ms);
  REQUIRE(readable(quiet->fd()));
  size_t busy_replies = 0;
  while (auto r = busy->Read(20ms)) ++busy_replies;
  INFO("replies the busy client had when the quiet one was answered: " << busy_replies);
  CHECK(busy_replies < 3 * Session::kRequestsPerTurn);
  // And the burst is still served in full afterwards, in order.
  for (int i = 0; i < 100000 && busy_replies < kBurst + 1; ++i) {
    io.poll();
    while (auto r = busy->Read(20ms)) ++busy_replies;
  }
  CHECK(busy_replies == kBurst + 1);
}
