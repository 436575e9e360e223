// Structured journal entries: the field list, the JOURNAL_STREAM check, and what the
// daemon really sends to /run/systemd/journal/socket (in a private mount namespace, so
// the host's /run is never touched).
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "atraced/app/journal_events.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"
#include "systemd_support.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

std::string StreamOf(int fd) {
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

TEST_CASE("journal fields of a created event directory", "[systemd][journal]") {
  StoreEvent e{StoreEvent::Kind::kCreated, "/var/log/ascend/atrace/trace_7_8_1/schedule_event_8_1", 8, 1000, "host",
               42, 0, {}, "", DumpKind::kNone, false};
  CHECK(JournalFields(e) == std::vector<std::string>{
                                "MESSAGE_ID=c815a1e2915e4675836e4aa7612355ce",
                                "MESSAGE=created event dir /var/log/ascend/atrace/trace_7_8_1/schedule_event_8_1 "
                                "(class=host, seq=42)",
                                "PRIORITY=6",
                                "SYSLOG_IDENTIFIER=atraced",
                                "ATRACE_EVENT=created",
                                "ATRACE_PATH=/var/log/ascend/atrace/trace_7_8_1/schedule_event_8_1",
                                "ATRACE_PID=8",
                                "ATRACE_UID=1000",
                                "ATRACE_CLASS=host",
                                "ATRACE_SEQ=42",
                                "ATRACE_BYTES=0",
                            });
}

TEST_CASE("journal fields carry the job, rank and world size the process sent, only those", "[systemd][journal]") {
  StoreEvent e{StoreEvent::Kind::kCreated, "/r/atrace/trace_1_2_3/schedule_event_2_3", 2, 1000, "host", 7, 0,
               {"J1", "5", "6"}, "", DumpKind::kNone, false};
  auto f = JournalFields(e);
  REQUIRE(f.size() == 14);
  CHECK(f[11] == "ATRACE_JOB=J1");
  CHECK(f[12] == "ATRACE_RANK=5");
  CHECK(f[13] == "ATRACE_WORLD_SIZE=6");
  e.labels = {"slurm.42", "", ""};
  f = JournalFields(e);
  REQUIRE(f.size() == 12);
  CHECK(f[11] == "ATRACE_JOB=slurm.42");
}

TEST_CASE("journal fields of an aged event directory", "[systemd][journal]") {
  StoreEvent e{StoreEvent::Kind::kAged, "/r/atrace/trace_1_2_3/stackcore_event_2_3", 2, 0, "device",
               18446744073709551615ull, 123456789012ull, {}, "", DumpKind::kNone, false};
  e.reason = "count";
  auto f = JournalFields(e);
  REQUIRE(f.size() == 12);
  CHECK(f[0] == "MESSAGE_ID=d8234ea857a84a909bf52db6751fe3c8");
  CHECK(f[1] == "MESSAGE=aged event dir /r/atrace/trace_1_2_3/stackcore_event_2_3 (class=device, "
                "seq=18446744073709551615, 123456789012 bytes freed)");
  CHECK(f[4] == "ATRACE_EVENT=aged");
  CHECK(f[6] == "ATRACE_PID=2");
  CHECK(f[7] == "ATRACE_UID=0");
  CHECK(f[8] == "ATRACE_CLASS=device");
  CHECK(f[9] == "ATRACE_SEQ=18446744073709551615");
  CHECK(f[10] == "ATRACE_BYTES=123456789012");
  CHECK(f[11] == "ATRACE_REASON=count");  // no ATRACE_DUMP: no dump, so no rank's evidence
  // A dump's directory says whose dump it was and whether a bundle held it, beside its labels:
  // what `hang --journal` names an aged rank by.
  e.labels = {"J1", "5", "8"};
  e.reason = "bytes";
  e.dump = DumpKind::kHang;
  f = JournalFields(e);
  REQUIRE(f.size() == 17);
  CHECK(f[11] == "ATRACE_JOB=J1");
  CHECK(f[12] == "ATRACE_RANK=5");
  CHECK(f[14] == "ATRACE_REASON=bytes");
  CHECK(f[15] == "ATRACE_DUMP=hang");
  CHECK(f[16] == "ATRACE_EXPORTED=0");
  e.dump = DumpKind::kOperator;
  e.exported = true;
  f = JournalFields(e);
  CHECK(f[15] == "ATRACE_DUMP=dump");
  CHECK(f[16] == "ATRACE_EXPORTED=1");
  // The two MESSAGE_IDs are distinct 128-bit ids in journald's 32 hex digit form.
  for (auto id : {kJournalMessageIdCreated, kJournalMessageIdAged}) {
    CHECK(id.size() == 32);
    CHECK(id.find_first_not_of("0123456789abcdef") == std::string_view::npos);
  }
  CHECK(kJournalMessageIdCreated != kJournalMessageIdAged);
}

TEST_CASE("journal fields of a labelled process's start", "[systemd][journal][hang]") {
  ProcessEvent e;
  e.pid = 77;
  e.uid = 1000;
  e.program = "python3";
  e.labels = {"J1", "5", "8"};
  e.hang_timeout = 300s;
  CHECK(JournalFields(e) == std::vector<std::string>{
                                "MESSAGE_ID=" + std::string(kJournalMessageIdStart),
                                "MESSAGE=start: pid 77 (python3) job J1 rank 5, watched for hangs of 300 s",
                                "PRIORITY=6",
                                "SYSLOG_IDENTIFIER=atraced",
                                "ATRACE_EVENT=start",
                                "ATRACE_PID=77",
                                "ATRACE_UID=1000",
                                "ATRACE_COMM=python3",
                                "ATRACE_JOB=J1",
                                "ATRACE_RANK=5",
                                "ATRACE_WORLD_SIZE=8",
                                "ATRACE_HANG_TIMEOUT_S=300",
                            });
}

TEST_CASE("journal fields of a hang: state, stall, frames and last records, escaped and bounded",
          "[systemd][journal][hang]") {
  ProcessEvent e;
  e.kind = ProcessEvent::Kind::kHang;
  e.pid = 77;
  e.uid = 1000;
  e.program = "evil\nMESSAGE=x";  // a comm is the process's own bytes
  e.labels = {"J1", "5", "8"};
  e.hang_timeout = 2s;
  e.state = "blocked";
  e.stalled_for = 12s;
  e.stalled_pid = 77;
  e.dir = "/r/atrace/trace_1_77_1/schedule_event_77_2";
  for (int i = 0; i < 12; ++i) e.top_frames.push_back("#" + std::to_string(i) + " 0x1 0x0 /lib/x.so f" + std::to_string(i));
  e.last_records.push_back({"hccl", "step 41\x1b[2J\xff"});
  e.last_records.push_back({"long", std::string(1000, 'a')});
  const auto f = JournalFields(e);
  auto field = [&f](const std::string& name) {
    for (const auto& x : f) {
      if (x.rfind(name + "=", 0) == 0) return x.substr(name.size() + 1);
    }
    return std::string("(absent)");
  };
  CHECK(field("MESSAGE_ID") == std::string(kJournalMessageIdHang));
  CHECK(field("PRIORITY") == "4");
  CHECK(field("ATRACE_EVENT") == "hang");
  CHECK(field("ATRACE_JOB") == "J1");
  CHECK(field("ATRACE_RANK") == "5");
  CHECK(field("ATRACE_WORLD_SIZE") == "8");
  CHECK(field("ATRACE_STALL_S") == "12");
  CHECK(field("ATRACE_STATE") == "blocked");
  CHECK(field("ATRACE_STALLED_PID") == "77");
  CHECK(field("ATRACE_PATH") == e.dir);
  CHECK(field("ATRACE_COMM") == "evil\\x0aMESSAGE=x");  // no second line, no forged field
  CHECK(field("MESSAGE").find("hang: pid 77 (evil\\x0aMESSAGE=x) job J1 rank 5 blocked, no record for 12 s; dumped to ") == 0);
  // At most 8 frames, innermost first.
  CHECK(field("ATRACE_FRAME_0") == "#0 0x1 0x0 /lib/x.so f0");
  CHECK(field("ATRACE_FRAME_7") == "#7 0x1 0x0 /lib/x.so f7");
  CHECK(field("ATRACE_FRAME_8") == "(absent)");
  CHECK(field("ATRACE_LAST_RECORD_0") == "hccl: step 41\\x1b[2J\\xff");
  CHECK(field("ATRACE_LAST_RECORD_1").size() == kJournalValueMax);
  for (const auto& x : f) {
    CAPTURE(x);
    CHECK(x.find('\n') == std::string::npos);
    CHECK(x.find_first_of("\x1b\xff") == std::string::npos);
  }
  // A process dumped with its job says whose stall it was; one not dumped says why.
  e.stalled_pid = 78;
  e.state = "running";
  e.dir.clear();
  e.refused = "pid 77 let go of its rings before its turn";
  const auto g = JournalFields(e);
  CHECK(std::find(g.begin(), g.end(), "ATRACE_REFUSED=pid 77 let go of its rings before its turn") != g.end());
  CHECK(std::find(g.begin(), g.end(), "ATRACE_STALLED_PID=78") != g.end());
  CHECK(g[1].find("(dumped with its job: pid 78 stalled); not dumped: pid 77 let go") != std::string::npos);
}

TEST_CASE("journal fields of a hang carry each communicator's last calls, escaped and at most 16",
          "[systemd][journal][hang][hccl]") {
  ProcessEvent e;
  e.kind = ProcessEvent::Kind::kHang;
  e.pid = 77;
  e.labels = {"J1", "5", "8"};
  e.state = "blocked";
  e.dir = "/r/d";
  e.completion_tracked = true;
  for (int i = 0; i < 20; ++i) {
    proto::CommunicatorSummary c;
    c.name = i == 0 ? std::string("world\n_UID=0 \x1b") : "c" + std::to_string(i);
    c.rank_known = true;
    c.rank = 5;
    c.size = 8;
    c.last_entered.comm_seq = 1041 + static_cast<uint64_t>(i);
    c.last_entered.op = ATR_LEDGER_OP_ALL_REDUCE;
    c.last_entered.count = 4096;
    c.last_entered.data_type = 3;
    c.last_completed = 1040;
    e.communicators.push_back(c);
  }
  const auto f = JournalFields(e);
  std::vector<std::string> comms;
  for (const auto& x : f) {
    CAPTURE(x);
    CHECK(x.find_first_of("\n\x1b") == std::string::npos);
    if (x.rfind("ATRACE_COLL_", 0) == 0) comms.push_back(x);
  }
  REQUIRE(comms.size() == proto::kMaxJournalCommunicators);
  CHECK(comms[0] == "ATRACE_COLL_0=rank=5 size=8 seq=1041 op=1 count=4096 dtype=3 reduce=0 peer=- completed=1040 tracked=1 cut=0 "
                    "name=world\\x0a_UID=0\\x20\\x1b");
  CHECK(comms[15].rfind("ATRACE_COLL_15=rank=5 size=8 seq=1056 ", 0) == 0);
  // A process without a ledger: no such field.
  e.communicators.clear();
  for (const auto& x : JournalFields(e)) CHECK(x.rfind("ATRACE_COLL_", 0) != 0);
}

TEST_CASE("JOURNAL_STREAM must name exactly the file open on the descriptor", "[systemd][journal]") {
  TempDir tmp;
  WriteFile(tmp / "a", "");
  WriteFile(tmp / "b", "");
  UniqueFd a(::open((tmp / "a").c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd b(::open((tmp / "b").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(a.valid());
  REQUIRE(b.valid());
  const std::string sa = StreamOf(a.get());
  CHECK(JournalStreamMatches(sa.c_str(), a.get()));
  CHECK_FALSE(JournalStreamMatches(sa.c_str(), b.get()));
  CHECK_FALSE(JournalStreamMatches(nullptr, a.get()));
  CHECK_FALSE(JournalStreamMatches(sa.c_str(), 987));  // not open
  for (std::string bad : {std::string(""), std::string(":"), sa + "x", sa + ":1", " " + sa, "+" + sa,
                          sa.substr(0, sa.find(':')), sa.substr(0, sa.find(':') + 1), sa.substr(sa.find(':'))}) {
    CAPTURE(bad);
    CHECK_FALSE(JournalStreamMatches(bad.c_str(), a.get()));
  }
}

TEST_CASE("the daemon sends structured entries only when stderr is the journal stream", "[systemd][journal]") {
  TempDir tmp;
  // Our end of the fake journal: a datagram socket bound, inside the daemon's own mount
  // namespace, at /run/systemd/journal/socket on a private tmpfs, handed back over a pair.
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  UniqueFd ours(pair[0]), theirs(pair[1]);
  const std::string log = tmp / "daemon.log";
  WriteFile(log, "");
  UniqueFd log_fd(::open(log.c_str(), O_RDONLY | O_CLOEXEC));
  const std::string stream = StreamOf(log_fd.get());

  auto hook = [fd = theirs.get()]() -> int {
    auto fail = [fd](char code) {
      (void)!::write(fd, &code, 1);
      return 77;
    };
    if (::unshare(CLONE_NEWNS) != 0) return fail('u');
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail('p');
    if (::mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") != 0) return fail('t');
    if (::mkdir("/run/systemd", 0755) != 0 || ::mkdir("/run/systemd/journal", 0755) != 0) return fail('d');
    int j = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, "/run/systemd/journal/socket");
    if (j < 0 || ::bind(j, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return fail('b');
    char ok = 'k';
    iovec iov{&ok, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &j, sizeof j);
    if (::sendmsg(fd, &msg, 0) != 1) return 78;
    ::close(j);
    return 0;
  };

  const std::string socket = tmp / "s.sock";
  std::vector<std::string> argv{ATRACED_BINARY, "--root", tmp / "root", "--socket", socket, "--record-num", "10",
                                "--log-level", "debug"};
  auto env = SanitizerEnv();
  env["JOURNAL_STREAM"] = stream;
  ChildProcess proc({argv, env, log, hook});

  // The descriptor (or the reason the namespace could not be made).
  char code = 0;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&code, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  pollfd p{ours.get(), POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10000) == 1);
  REQUIRE(::recvmsg(ours.get(), &msg, 0) == 1);
  if (code != 'k') {
    WARN("cannot make a private mount namespace for a fake journal (step " << code
                                                                          << "; needs root or CAP_SYS_ADMIN); skipping");
    return;
  }
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  REQUIRE(c != nullptr);
  int raw = -1;
  std::memcpy(&raw, CMSG_DATA(c), sizeof raw);
  UniqueFd journal(raw);

  REQUIRE(WaitUntil([&] { return RawClient::Connect(socket).has_value(); }, 20s));
  CHECK(proc.output().find("stderr is the journal") != std::string::npos);
  // Into the journal, lines carry journald's <N> priority prefix, and no time of their own.
  CHECK(proc.output().find("<5>atraced ready") != std::string::npos);
  auto client = RawClient::Connect(socket);
  REQUIRE(client);
  REQUIRE(client->Hello());
  // Read as we go: a datagram socket queues only max_dgram_qlen (often 10) messages, and
  // like journald's own clients the daemon waits when the journal is behind.
  std::vector<std::string> entries;
  auto receive = [&](size_t want) {
    while (entries.size() < want) {
      pollfd jp{journal.get(), POLLIN, 0};
      if (::poll(&jp, 1, 10000) != 1) return;
      char buf[8192];
      ssize_t n = ::recv(journal.get(), buf, sizeof buf, 0);
      if (n <= 0) return;
      entries.emplace_back(buf, static_cast<size_t>(n));
    }
  };
  std::string err;
  std::vector<std::string> paths;
  for (size_t i = 0; i < 11; ++i) {
    paths.push_back(client->Emit(ATR_EVENT_SCHEDULE, "obj", "12345", &err));
    REQUIRE(err == "");
    receive(i < 10 ? i + 1 : 12);  // the 11th also ages the oldest (record num 10)
  }
  pollfd extra{journal.get(), POLLIN, 0};
  CHECK(::poll(&extra, 1, 200) == 0);  // nothing more
  REQUIRE(entries.size() == 12);
  const std::string pid = std::to_string(::getpid());
  const std::string uid = std::to_string(::geteuid());
  int created = 0;
  for (auto& e : entries) {
    CAPTURE(e);
    if (HasLine(e, "MESSAGE_ID=c815a1e2915e4675836e4aa7612355ce")) {
      CHECK(LineValue(e, "ATRACE_PATH") == Parent(paths[static_cast<size_t>(created)]));
      CHECK(LineValue(e, "ATRACE_SEQ") == std::to_string(created + 1));
      ++created;
    } else {
      REQUIRE(HasLine(e, "MESSAGE_ID=d8234ea857a84a909bf52db6751fe3c8"));
      CHECK(LineValue(e, "ATRACE_PATH") == Parent(paths[0]));
      CHECK(LineValue(e, "ATRACE_SEQ") == "1");
      CHECK(LineValue(e, "ATRACE_EVENT") == "aged");
      CHECK(LineValue(e, "ATRACE_BYTES").value_or("").find_first_not_of("0123456789") == std::string::npos);
    }
    CHECK(LineValue(e, "ATRACE_PID") == pid);
    CHECK(LineValue(e, "ATRACE_UID") == uid);
    CHECK(LineValue(e, "ATRACE_CLASS") == "host");
    CHECK(LineValue(e, "PRIORITY") == "6");
    CHECK(LineValue(e, "SYSLOG_IDENTIFIER") == "atraced");
  }
  CHECK(created == 11);
  CHECK_FALSE(Exists(Parent(paths[0])));
  proc.Signal(SIGTERM);
  CHECK(proc.Wait(10s) == 0);
}

TEST_CASE("a JOURNAL_STREAM that is not stderr turns the structured entries off", "[systemd][journal]") {
  TempDir tmp;
  WriteFile(tmp / "other", "");
  UniqueFd other(::open((tmp / "other").c_str(), O_RDONLY | O_CLOEXEC));
  const std::string socket = tmp / "s.sock";
  auto env = SanitizerEnv();
  env["JOURNAL_STREAM"] = StreamOf(other.get());
  ChildProcess proc({{ATRACED_BINARY, "--root", tmp / "root", "--socket", socket, "--log-level", "debug"},
                     env,
                     tmp / "daemon.log",
                     {}});
  REQUIRE(WaitUntil([&] { return proc.output().find("atraced ready") != std::string::npos; }, 20s));
  CHECK(proc.output().find("stderr is the journal") == std::string::npos);
  // Not the journal: lines a person reads, the local time to the millisecond and the level
  // word, no <N> prefix.
  CHECK(proc.output().find("<5>atraced ready") == std::string::npos);
  CHECK(std::regex_search(proc.output(),
                          std::regex("(^|\n)[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} notice: atraced ready")));
  proc.Signal(SIGTERM);
  CHECK(proc.Wait(10s) == 0);
}
