// The built atraced binary on a temporary root and socket, driven through the real socket.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include "atraced/store/names.h"
#include "support/daemon_process.h"
#include "support/daemon_helpers.h"
#include "support/raw_client.h"
#include "support/subprocess.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

TEST_CASE("an emitted event lands in the CANN layout with CANN's modes", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  std::string path = c.Emit(ATR_EVENT_SCHEDULE, "RUNTIME_ATRACE_DEV0_TS0", "hello\n", &err);
  REQUIRE(err.empty());
  CHECK(ReadFile(path) == "hello\n");
  CHECK(Mode(path) == 0640);
  std::string event_dir = Parent(path);
  std::string proc_dir = Parent(event_dir);
  CHECK(Parent(proc_dir) == d.trace_dir());
  CHECK(Mode(event_dir) == 0750);
  CHECK(Mode(proc_dir) == 0750);
  auto proc = ParseProcessDirName(proc_dir.substr(proc_dir.rfind('/') + 1));
  REQUIRE(proc);
  CHECK(proc->pid == ::getpid());
  CHECK(proc->pgid == ::getpgid(0));
  auto ev = ParseEventDirName(event_dir.substr(event_dir.rfind('/') + 1));
  REQUIRE(ev);
  CHECK(ev->kind == EventKind::kSchedule);
  CHECK(ev->pid == ::getpid());
  CHECK(path.substr(path.rfind('/') + 1) == "schedule_tracer_RUNTIME_ATRACE_DEV0_TS0.txt");
  // A second event from the same connection goes into the same process dir.
  std::string second = c.Emit(ATR_EVENT_SCHEDULE, "x", "y", &err);
  CHECK(Parent(Parent(second)) == proc_dir);
}

TEST_CASE("aging is root-wide across client processes", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  for (int i = 0; i < 4; ++i) {
    int rc = InChild([&] {
      auto c = RawClient::Connect(d.socket());
      if (!c || !c->Hello()) return 2;
      std::string err;
      for (int k = 0; k < 4; ++k) {
        c->Emit(ATR_EVENT_SCHEDULE, "obj", "data", &err);
        if (!err.empty()) return 3;
      }
      return 0;
    });
    REQUIRE(rc == 0);
  }
  CHECK(SettledEventDirs(d.trace_dir(), "schedule", 10) == 10);
  auto c = Connected(d);
  CHECK(QueryStatus(c).host_dirs == 10);
  CHECK(QueryStatus(c).dirs_aged == 6);
  CHECK(d.LogHas("aged event dir " + d.trace_dir() + "/trace_"));
}

TEST_CASE("host and device dirs are counted separately and exit dirs are not in their count", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  for (int i = 0; i < 12; ++i) c.Emit(ATR_EVENT_SCHEDULE, "host", "h", &err);
  for (int i = 0; i < 14; ++i) c.Emit(ATR_EVENT_SCHEDULE, "dev", "d", &err, ATR_SIDE_DEVICE, 3);
  for (int i = 0; i < 15; ++i) c.Emit(ATR_EVENT_EXIT, "exit", "e", &err);
  REQUIRE(err.empty());
  auto s = QueryStatus(c);
  CHECK(s.host_dirs == 10);
  CHECK(s.device_dirs == 10);
  CHECK(s.exit_dirs == 15);
  CHECK(SettledEventDirs(d.trace_dir(), "schedule", 20) == 20);
  CHECK(CountEventDirs(d.trace_dir(), "exit") == 15);
}

TEST_CASE("106 exit events at the defaults leave exactly the newest 100", "[integration][exit]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  std::vector<std::string> paths;
  for (int i = 0; i < 106; ++i) {
    paths.push_back(c.Emit(ATR_EVENT_EXIT, "exit", "e", &err));
    REQUIRE(err.empty());
  }
  auto s = QueryStatus(c);
  CHECK(s.exit_dirs == 100);
  CHECK(s.dirs_aged == 6);
  CHECK(SettledEventDirs(d.trace_dir(), "exit", 100) == 100);
  // The six that went are the oldest; the returned paths are files inside event dirs.
  namespace fs = std::filesystem;
  for (int i = 0; i < 6; ++i) CHECK_FALSE(fs::exists(fs::path(paths[i]).parent_path()));
  for (int i = 6; i < 106; ++i) CHECK(fs::exists(fs::path(paths[i]).parent_path()));
}

TEST_CASE("the environment picks the root and the record number", "[integration]") {
  SECTION("valid values") {
    TempDir work;
    DaemonProcess d({{}, {{"ASCEND_WORK_PATH", work / "w"}, {"ASCEND_TRACE_RECORD_NUM", "15"}}, false, std::nullopt});
    REQUIRE(d.Start());
    CHECK(d.LogHas("set dir num=15 by env ASCEND_TRACE_RECORD_NUM."));
    auto c = Connected(d);
    auto s = QueryStatus(c);
    CHECK(s.record_num == 15);
    CHECK(s.root == work / "w");
    std::string err;
    std::string path = c.Emit(ATR_EVENT_SCHEDULE, "o", "x", &err);
    CHECK(path.rfind(work / "w/atrace/trace_", 0) == 0);
  }
  SECTION("invalid record number falls back with CANN's warning") {
    DaemonProcess d({{}, {{"ASCEND_TRACE_RECORD_NUM", "1001"}}, true, std::nullopt});
    REQUIRE(d.Start());
    CHECK(d.LogHas("warning: invalid value [1001] for ASCEND_TRACE_RECORD_NUM, expected range: [10, 1000]. Use default dir num=10."));
    auto c = Connected(d);
    CHECK(QueryStatus(c).record_num == 10);
  }
  SECTION("unset") {
    DaemonProcess d({{}, {}, true, std::nullopt});
    REQUIRE(d.Start());
    CHECK(d.LogHas("info: doesn't set env ASCEND_TRACE_RECORD_NUM, use default dir num=10."));
  }
  SECTION("the flag wins over the environment") {
    DaemonProcess d({{}, {{"ASCEND_TRACE_RECORD_NUM", "15"}}, true, 20});
    REQUIRE(d.Start());
    auto c = Connected(d);
    CHECK(QueryStatus(c).record_num == 20);
  }
}

TEST_CASE("bad flags exit 2 with a message naming the key", "[integration]") {
  DaemonProcess d({{"--max-clients", "0"}, {}, true, 10});
  CHECK_FALSE(d.Start(5s));
  CHECK(d.LogHas("invalid value [0] for max-clients: expected an integer in [1, 65536]"));
  DaemonProcess e({{"--exit-record-num", "9"}, {}, true, 10});
  CHECK_FALSE(e.Start(5s));
  CHECK(e.LogHas("invalid value [9] for exit-record-num: expected an integer in [10, 100000]"));
}

TEST_CASE("kill -9 and restart: the limit holds and nothing half-made stays", "[integration]") {
  DaemonProcess d({{}, {}, true, 20});
  REQUIRE(d.Start());
  {
    auto c = Connected(d);
    std::string err;
    for (int i = 0; i < 18; ++i) c.Emit(ATR_EVENT_SCHEDULE, "o", "x", &err);
    REQUIRE(err.empty());
    // A burst in flight when the daemon dies.
    for (int i = 0; i < 50; ++i) {
      proto::EventBegin b = BeginRequest(1000 + i);
      c.Queue(ATR_OP_EVENT_BEGIN, Payload(b));
    }
    c.Flush();
    std::this_thread::sleep_for(5ms);
    CHECK(d.Stop(SIGKILL) == 128 + SIGKILL);
  }
  DaemonProcess again({{}, {}, false, 10});
  // Same root as before.
  DaemonProcess::Options o{{"--root", d.root()}, {}, false, 10};
  DaemonProcess restarted(o);
  REQUIRE(restarted.Start());
  auto c = Connected(restarted);
  CHECK(QueryStatus(c).host_dirs == 10);
  CHECK(SettledEventDirs(d.trace_dir(), "schedule", 10) == 10);
  for (auto& proc : ListNames(d.trace_dir())) {
    for (auto& ev : ListNames(d.trace_dir() + "/" + proc)) CHECK(ev.find("staging") == std::string::npos);
  }
}

TEST_CASE("fd passing: the client writes at native speed into the daemon's file", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  proto::EventBegin b = BeginRequest(1);
  proto::FileOpen o = ObjectFileRequest(1, 2, "aicpu", true);
  c.Queue(ATR_OP_EVENT_BEGIN, Payload(b));
  c.Queue(ATR_OP_FILE_OPEN, Payload(o));
  c.Queue(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{2}));
  REQUIRE(c.Flush());
  REQUIRE(c.Read()->status == 0);
  auto opened = c.Read();
  REQUIRE(opened->status == 0);
  proto::PathReply path;
  REQUIRE(proto::Decode(opened->body, &path).ok());
  auto got = c.Read();
  REQUIRE(got);
  REQUIRE(got->status == 0);
  REQUIRE(c.fds().size() == 1);
  UniqueFd fd = std::move(c.fds().front());
  std::string data(100000, 'z');
  REQUIRE(::write(fd.get(), data.data(), data.size()) == static_cast<ssize_t>(data.size()));
  fd.reset();
  auto closed = c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{2}));
  REQUIRE(closed->status == 0);
  proto::SizeReply size;
  REQUIRE(proto::Decode(closed->body, &size).ok());
  CHECK(size.size == data.size());
  CHECK(ReadFile(path.path) == data);
  CHECK(path.path.substr(path.path.rfind('/') + 1) == "schedule_tracer_aicpu.bin");
  CHECK(c.Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}))->status == 0);
  const proto::StatusReply st = QueryStatus(c);
  CHECK(st.bytes_apparent == data.size());  // written through the descriptor: measured by fstat
  CHECK(st.bytes_written % 512 == 0);       // allocated blocks
  CHECK(st.bytes_written >= data.size() / 2);
}

TEST_CASE("fd passing must be negotiated", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c->Hello(0));
  std::string err;
  proto::EventBegin b = BeginRequest(1);
  proto::FileOpen o = ObjectFileRequest(1, 2, "x");
  REQUIRE(c->Call(ATR_OP_EVENT_BEGIN, Payload(b))->status == 0);
  REQUIRE(c->Call(ATR_OP_FILE_OPEN, Payload(o))->status == 0);
  auto r = c->Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{2}));
  CHECK(r->status == ATR_ENOTSUP);
  CHECK(c->fds().empty());
}

TEST_CASE("a client that disconnects mid-event keeps what it wrote", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  std::string path;
  {
    auto c = Connected(d);
    proto::EventBegin b = BeginRequest(1);
    proto::FileOpen o = ObjectFileRequest(1, 2, "partial");
    std::string part = "written before the crash\n";
    proto::FileAppend a{2, {reinterpret_cast<const uint8_t*>(part.data()), part.size()}};
    REQUIRE(c.Call(ATR_OP_EVENT_BEGIN, Payload(b))->status == 0);
    auto opened = c.Call(ATR_OP_FILE_OPEN, Payload(o));
    proto::PathReply p;
    REQUIRE(proto::Decode(opened->body, &p).ok());
    path = p.path;
    REQUIRE(c.Call(ATR_OP_FILE_APPEND, Payload(a))->status == 0);
  }  // hang up with the event and the file open
  REQUIRE(d.WaitForLog("disconnected with 1 open event(s)"));
  CHECK(ReadFile(path) == "written before the crash\n");
  // The event is no longer pinned: it ages like any other.
  auto c = Connected(d);
  std::string err;
  for (int i = 0; i < 10; ++i) c.Emit(ATR_EVENT_SCHEDULE, "o", "x", &err);
  CHECK(EventuallyGone(path));
}

TEST_CASE("bad input closes only the offending connection", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  SECTION("random bytes") {
    auto bad = RawClient::Connect(d.socket());
    std::mt19937 rng(42);
    std::vector<uint8_t> junk(4096);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    bad->SendRaw(junk);
    CHECK(bad->SeesHangUp());
    CHECK(d.WaitForLog("protocol violation: bad magic"));
  }
  SECTION("a 4 GiB length prefix") {
    auto bad = RawClient::Connect(d.socket());
    std::vector<uint8_t> frame;
    proto::AppendFrame(frame, ATR_OP_HELLO, 0, 1, {});
    frame[4] = frame[5] = frame[6] = frame[7] = 0xff;
    bad->SendRaw(frame);
    CHECK(bad->SeesHangUp());
    CHECK(d.WaitForLog("exceeds limit"));
  }
  SECTION("half a frame, then a hang-up") {
    auto bad = RawClient::Connect(d.socket());
    std::vector<uint8_t> frame;
    proto::AppendFrame(frame, ATR_OP_HELLO, 0, 1, Payload(proto::Hello{}));
    frame.resize(frame.size() / 2);
    bad->SendRaw(frame);
  }
  SECTION("a request before HELLO gets -EPROTO") {
    auto c = RawClient::Connect(d.socket());
    auto r = c->Call(ATR_OP_STATUS, {});
    REQUIRE(r);
    CHECK(r->status == ATR_EPROTO);
    CHECK(r->message.find("HELLO") != std::string::npos);
  }
  SECTION("an unknown opcode gets -ENOSYS and the connection stays") {
    auto c = Connected(d);
    auto r = c.Call(77, {});
    REQUIRE(r);
    CHECK(r->status == ATR_ENOSYS);
    CHECK(QueryStatus(c).record_num == 10);
  }
  SECTION("another major version is refused and closed") {
    auto c = RawClient::Connect(d.socket());
    proto::Hello h;
    h.major = 2;
    auto r = c->Call(ATR_OP_HELLO, Payload(h));
    REQUIRE(r);
    CHECK(r->status == ATR_EPROTONOSUPPORT);
    CHECK(c->SeesHangUp());
  }
  // Whatever happened above, a well-behaved client is still served.
  auto good = Connected(d);
  std::string err;
  CHECK_FALSE(good.Emit(ATR_EVENT_SCHEDULE, "fine", "ok", &err).empty());
  CHECK(err.empty());
}

TEST_CASE("each name rule is refused with the field and the reason", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  auto [name, needle] = GENERATE(table<std::string, std::string>({
      {"", "object name"},
      {".", "object name"},
      {"..", "object name"},
      {"a/b", "object name"},
      {std::string("a\0b", 3), "object name"},
      {"sp ace", "object name"},
      {std::string(32, 'n'), "object name"},
  }));
  CAPTURE(name);
  std::string err;
  std::string path = c.Emit(ATR_EVENT_SCHEDULE, name, "x", &err);
  CHECK(path.empty());
  CHECK(err.find(needle) != std::string::npos);
  // Nothing outside the event dir was created.
  CHECK_FALSE(Exists(d.trace_dir() + "/b"));
}

TEST_CASE("a host event cannot carry its own time and a device event time is validated", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  proto::EventBegin b = BeginRequest(1);
  b.time = "20260101000000000000";
  auto host = c.Call(ATR_OP_EVENT_BEGIN, Payload(b));
  CHECK(host->status == ATR_EINVAL);
  CHECK(host->message.find("time") != std::string::npos);
  b.side = ATR_SIDE_DEVICE;
  b.time = "20261301000000000000";
  auto bad = c.Call(ATR_OP_EVENT_BEGIN, Payload(b));
  CHECK(bad->status == ATR_EINVAL);
  CHECK(bad->message.find("month") != std::string::npos);
  b.time = "20260101000000000000";
  auto ok = c.Call(ATR_OP_EVENT_BEGIN, Payload(b));
  REQUIRE(ok->status == 0);
  proto::PathReply p;
  REQUIRE(proto::Decode(ok->body, &p).ok());
  CHECK(p.path.substr(p.path.size() - 20) == "20260101000000000000");
}

TEST_CASE("200 concurrent clients are all served and the limit stays exact", "[integration][load]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  std::vector<RawClient> clients;
  for (int i = 0; i < 200; ++i) {
    auto c = RawClient::Connect(d.socket());
    REQUIRE(c);
    clients.push_back(std::move(*c));
  }
  // Every client sends HELLO plus a whole event in one write before anyone reads a reply.
  for (auto& c : clients) {
    proto::Hello h;
    c.Queue(ATR_OP_HELLO, Payload(h));
    proto::EventBegin b = BeginRequest(1);
    proto::FileOpen o = ObjectFileRequest(1, 1, "load");
    c.Queue(ATR_OP_EVENT_BEGIN, Payload(b));
    c.Queue(ATR_OP_FILE_OPEN, Payload(o));
    c.Queue(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}));
    REQUIRE(c.Flush());
  }
  size_t ok = 0;
  for (auto& c : clients) {
    bool all = true;
    for (int k = 0; k < 4; ++k) {
      auto r = c.Read();
      all = all && r && r->status == 0;
    }
    ok += all;
  }
  CHECK(ok == 200);
  CHECK(SettledEventDirs(d.trace_dir(), "schedule", 10) == 10);
  auto c = Connected(d);
  CHECK(QueryStatus(c).host_dirs == 10);
}

TEST_CASE("an idle client is dropped after the timeout", "[integration]") {
  DaemonProcess d({{"--idle-timeout", "1"}, {}, true, 10});
  REQUIRE(d.Start());
  auto silent = RawClient::Connect(d.socket());
  REQUIRE(silent);
  CHECK(silent->SeesHangUp(5s));
  CHECK(d.LogHas("dropping idle connection"));
}

TEST_CASE("SIGTERM exits 0 and removes its socket: a dead daemon's socket is replaced and a live one is not",
          "[integration][socket]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  CHECK(d.Stop(SIGTERM, 5s) == 0);
  CHECK(d.LogHas("atraced stopped"));
  // A clean stop takes the socket file it bound with it (issue 23, finding 6): a client then
  // reads "no daemon socket", not "nothing listens".
  CHECK_FALSE(Exists(d.socket()));
  CHECK(d.LogHas("removed socket " + d.socket()));
  // SIGKILL leaves no time for that: the next start replaces the dead socket.
  REQUIRE(d.Start());
  CHECK(d.Stop(SIGKILL, 5s) == 128 + SIGKILL);
  CHECK(Exists(d.socket()));
  REQUIRE(d.Start());
  CHECK(d.LogHas("replacing stale socket"));
  // A second daemon (its own root) on a live socket refuses to start, and leaves the file.
  DaemonProcess::Options second;
  second.socket = d.socket();
  DaemonProcess other(second);
  CHECK_FALSE(other.Start(5s));
  CHECK(other.exited_during_start() == 1);
  CHECK(other.LogHas("another daemon is already listening on " + d.socket()));
  CHECK(Exists(d.socket()));
  auto still = Connected(d);
  CHECK(QueryStatus(still).clients >= 1);
}

TEST_CASE("a clean stop leaves a socket file that is no longer its own", "[integration][socket]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  // Someone moves the daemon's socket away and puts another file at the path.
  REQUIRE(::rename(d.socket().c_str(), (d.socket() + ".moved").c_str()) == 0);
  WriteFile(d.socket(), "not the daemon's");
  CHECK(d.Stop(SIGTERM, 5s) == 0);
  CHECK(ReadFile(d.socket()) == "not the daemon's");
  CHECK(d.LogHas("is no longer the one this daemon bound; leaving it"));
}

TEST_CASE("a --socket in a directory that does not exist is an error, not a new directory", "[integration][socket]") {
  TempDir where;
  const std::string missing = where / "typo/atraced.sock";
  DaemonProcess::Options o;
  o.socket = missing;
  DaemonProcess d(o);
  CHECK_FALSE(d.Start(10s));
  CHECK(d.exited_during_start() == 1);
  CHECK(d.LogHas("socket directory " + (where / "typo") + ": No such file or directory: create it, or give --socket a "
                 "path in a directory that exists"));
  CHECK_FALSE(Exists(where / "typo"));
}

TEST_CASE("SIGHUP re-reads the configuration and ages at once", "[integration]") {
  TempDir conf;
  WriteFile(conf / "a.conf", "record-num = 20\n");
  DaemonProcess d({{"--config", conf / "a.conf"}, {}, true, std::nullopt});
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  // Emits `n` events of `event`, rewrites the file, reloads and checks the class shrank to `left`.
  auto reload = [&](uint8_t event, const char* kind, uint32_t proto::StatusReply::*dirs, int n, const std::string& text,
                    const std::string& logged, uint32_t left) {
    for (int i = 0; i < n; ++i) c.Emit(event, "o", "x", &err);
    CHECK(QueryStatus(c).*dirs == static_cast<uint32_t>(n));
    WriteFile(conf / "a.conf", text);
    d.Signal(SIGHUP);
    REQUIRE(d.WaitForLog(logged));
    for (int i = 0; i < 2000 && QueryStatus(c).*dirs != left; ++i) std::this_thread::sleep_for(10ms);  // up to 20 s
    CHECK(QueryStatus(c).*dirs == left);
    CHECK(SettledEventDirs(d.trace_dir(), kind, left) == left);
  };
  reload(ATR_EVENT_SCHEDULE, "schedule", &proto::StatusReply::host_dirs, 20, "record-num = 12\n",
         "reloaded configuration; record num 12", 12);
  reload(ATR_EVENT_EXIT, "exit", &proto::StatusReply::exit_dirs, 15, "record-num = 12\nexit-record-num = 10\n",
         "exit record num 10", 10);
}

TEST_CASE("SIGHUP applies the retention keys at once", "[integration][retention]") {
  TempDir conf;
  WriteFile(conf / "a.conf", "record-num = 100\n");
  DaemonProcess d({{"--config", conf / "a.conf"}, {}, true, std::nullopt});
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  const std::string block(8192, 'x');
  for (int i = 0; i < 20; ++i) REQUIRE_FALSE(c.Emit(ATR_EVENT_SCHEDULE, "o", block, &err).empty());
  auto before = QueryStatus(c);
  REQUIRE(before.retention.present);
  CHECK(before.retention.aging_policy == 0);
  CHECK(before.retention.max_age_s == 0);
  // A budget of 64K: about 8 of the 20 dirs fit; the rest go at once, counted as `bytes`.
  WriteFile(conf / "a.conf",
            "record-num = 100\nmax-use = 64K\nkeep-free = 1K\naging-policy = fair\nmax-age = 1h\n"
            "rate-limit-burst = 1\nrate-limit-interval = 1h\nmax-bytes-per-client = 1M\n");
  d.Signal(SIGHUP);
  REQUIRE(d.WaitForLog("retention: max-use set, keep-free set, aging-policy fair, max-age 3600s"));
  auto after = QueryStatus(c);
  CHECK(after.retention.max_use == 64u << 10);
  CHECK(after.retention.keep_free == 1u << 10);
  CHECK(after.retention.aging_policy == 1);
  CHECK(after.retention.max_age_s == 3600);
  CHECK(after.retention.aged_max_use > 0);
  CHECK(after.retention.used_host <= 64u << 10);
  CHECK(after.host_dirs < 20);
  // The rate limit too: this process may create one more event in the hour, not two.
  CHECK_FALSE(c.Emit(ATR_EVENT_SCHEDULE, "o", "x", &err).empty());
  CHECK(c.Emit(ATR_EVENT_SCHEDULE, "o", "x", &err).empty());
  CHECK(err.find("rate limit") != std::string::npos);
  // A bad value is refused and the running settings stay.
  WriteFile(conf / "a.conf", "max-use = lots\n");
  d.Signal(SIGHUP);
  REQUIRE(d.WaitForLog("reload refused"));
  CHECK(QueryStatus(c).retention.max_use == 64u << 10);
}

TEST_CASE("the socket is mode 0660", "[integration][security]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  CHECK(Mode(d.socket()) == 0660);
}

TEST_CASE("SIGTERM the moment the daemon is ready is still a clean stop", "[integration]") {
  for (int round = 0; round < 5; ++round) {
    DaemonProcess d;
    // Start() also probes the socket; here the signal must follow the ready line at once.
    REQUIRE(d.Start());
    d.Signal(SIGTERM);
    CHECK(d.Wait(10s) == 0);
    CHECK(d.LogHas("atraced stopped"));
  }
}
