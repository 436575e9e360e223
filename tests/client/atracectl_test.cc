// atracectl, run as a program against a real daemon: every command, --json, exit codes,
// --help at every level.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>

#include <unistd.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/subprocess.h"

using namespace atraced::testing;

namespace {

RunResult Ctl(const std::vector<std::string>& args, const std::string& input = "",
              const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv{ATRACECTL_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, {.env = env, .input = input});
}

RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args, const std::string& input = "") {
  args.insert(args.begin(), {"--socket", d.socket()});
  return Ctl(args, input);
}

// A Unix stream socket bound at `path` (the file made), not listening yet.
int BoundSocket(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

std::string Trim(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

bool Has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// The value of `"key":<number>` in a JSON text, or -1.
long long JsonNumber(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

}  // namespace

TEST_CASE("atracectl --help works at every level", "[atracectl]") {
  auto top = Ctl({"--help"});
  CHECK(top.exit_code == 0);
  CHECK(Has(top.out, "Usage: atracectl"));
  for (const char* cmd : {"emit", "status", "list", "du", "vacuum", "show", "info", "export"}) {
    INFO(cmd);
    CHECK(Has(top.out, cmd));
    auto sub = Ctl({cmd, "--help"});
    CHECK(sub.exit_code == 0);
    CHECK(Has(sub.out, std::string("atracectl [--socket PATH] ") + cmd));
  }
  auto emit = Ctl({"emit", "--help"});
  CHECK(Has(emit.out, "--object"));
  CHECK(Has(emit.out, "--device"));
  CHECK(Has(Ctl({"vacuum", "-h"}).out, "--dry-run"));
}

TEST_CASE("atracectl usage errors exit 2 and say what is wrong", "[atracectl]") {
  TempDir tmp;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{}, "no command"},
      {{"frobnicate"}, "unknown command 'frobnicate'\n"},  // nothing close: no guess
      {{"stauts"}, "unknown command 'stauts'; did you mean 'status'?"},
      {{"lst", "--json"}, "unknown command 'lst'; did you mean 'list'?"},
      {{"--bogus", "status"}, "bogus"},
      {{"status", "--verbose"}, "verbose"},
      {{"emit", "--object", "o"}, "event"},
      {{"emit", "--event", "schedule"}, "object"},
      {{"emit", "--event", "panic", "--object", "o"}, "--event"},
      {{"emit", "--event", "schedule", "--object", "o", "--time", "20260101000000000000"}, "--device"},
      {{"emit", "--event", "schedule", "--object", "o", "--device", "1", "--time", "2026"}, "20 digits"},
      {{"emit", "--event", "schedule", "--object", "o", "--device", "x"}, "device"},
      {{"emit", "--event", "schedule", "--object", "o", tmp / "missing.txt"}, "cannot read"},
      {{"list", "extra"}, "unexpected argument (this command takes no arguments)"},
      {{"emit", "--event", "exit", "--object", "o", "a", "b"}, "takes one FILE"},
  };
  for (const auto& c : cases) {
    auto r = Ctl(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(Has(r.err, c.says));
    CHECK(r.out.empty());
  }
}

TEST_CASE("atracectl exits 1 when the daemon is absent or refuses", "[atracectl]") {
  TempDir tmp;
  // The errors table of issue 23: the path, the cause and what to do, one meaning each.
  auto absent = Ctl({"--socket", tmp / "none.sock", "status"});
  CHECK(absent.exit_code == 1);
  CHECK(Has(absent.err, "atracectl: no daemon socket at " + (tmp / "none.sock") + ": is atraced running?"));
  CHECK(Has(absent.err, "systemctl start atraced.socket"));

  // No explicit socket: ATRACED_SOCKET is honoured, and named.
  auto env = Ctl({"status"}, "", {{"ATRACED_SOCKET", tmp / "env.sock"}});
  CHECK(env.exit_code == 1);
  CHECK(Has(env.err, "no daemon socket at " + (tmp / "env.sock")));

  // A socket nobody listens on: what a daemon killed with SIGKILL leaves.
  const std::string stale = tmp / "stale.sock";
  ::close(BoundSocket(stale));  // the file stays, nothing listens
  auto refused_conn = Ctl({"--socket", stale, "status"});
  CHECK(refused_conn.exit_code == 1);
  CHECK(Has(refused_conn.err, "nothing listens on " + stale + " (a daemon that stopped left its socket behind)"));

  // ATRACED_SOCKET naming a file that is no socket: connect() says "refused" there too, but
  // no daemon ever listened on it.
  auto not_socket = Ctl({"status"}, "", {{"ATRACED_SOCKET", "/etc/hostname"}});
  CHECK(not_socket.exit_code == 1);
  CHECK(Has(not_socket.err, "atracectl: /etc/hostname is a regular file, not a socket: point ATRACED_SOCKET at the "
                            "daemon's socket"));
  CHECK_FALSE(Has(not_socket.err, "left its socket behind"));
  auto dir_socket = Ctl({"--socket", tmp.path(), "status"});
  CHECK(Has(dir_socket.err, tmp.path() + " is a directory, not a socket: point --socket at the daemon's socket"));

  // A user outside the socket's group (the system socket is 0660 root:atrace): the group to join.
  const bool nobody_runs_it =
      ::geteuid() == 0 &&
      Run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/test", "-x", ATRACECTL_BINARY})
              .exit_code == 0;
  if (!nobody_runs_it) WARN("skipped the group case: needs root, and a build tree uid 65534 may run");
  if (nobody_runs_it) {
    TempDir open_dir;
    REQUIRE(::chmod(open_dir.path().c_str(), 0755) == 0);
    const std::string guarded = open_dir / "guarded.sock";
    const int fd = BoundSocket(guarded);
    REQUIRE(::listen(fd, 4) == 0);
    REQUIRE(::chmod(guarded.c_str(), 0660) == 0);
    auto denied = Run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ATRACECTL_BINARY, "--socket",
                       guarded, "status"});
    CHECK(denied.exit_code == 1);
    // Group root is root's alone: joining it is no remedy; the socket needs a group of its own.
    CHECK(Has(denied.err, "permission denied on " + guarded + ": the socket's group is root, so only root may connect: "
                          "ask an administrator to set socket-group in atraced.conf"));
    CHECK_FALSE(Has(denied.err, "join"));
    // A socket of another group: the group to join.
    const group* users = ::getgrnam("users");
    if (users != nullptr && users->gr_gid != 65534) {
      REQUIRE(::chown(guarded.c_str(), 0, users->gr_gid) == 0);
      auto outsider = Run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ATRACECTL_BINARY,
                           "--socket", guarded, "status"});
      CHECK(outsider.exit_code == 1);
      CHECK(Has(outsider.err, "permission denied on " + guarded + ": it is for members of group 'users'; join it "
                              "('sudo usermod -aG users $USER', then log in again)"));
    }
    ::close(fd);
  }

  DaemonProcess d;
  REQUIRE(d.Start());
  // What only the daemon can tell (month 13 in a well-formed time): exit 1, its message.
  auto refused = Ctl(d, {"emit", "--event", "schedule", "--object", "o", "--device", "1", "--time",
                         "20261301000000000000"}, "x");
  CHECK(refused.exit_code == 1);
  CHECK(Has(refused.err, "daemon: time"));  // the daemon's own message
  CHECK(refused.out.empty());
  CHECK(ListNames(d.trace_dir()) == std::vector<std::string>{".atraced_aged", ".atraced_lock", ".atraced_order"});
}

// Issue 23, finding 3 and the errors table: an argument atracectl can check is a usage error
// (exit 2) that names the rule, and nothing reaches the daemon: no directory is made, none
// is aged. With CANN's layout only a name of [A-Za-z0-9_.-] can be an object file.
TEST_CASE("atracectl emit checks its arguments before it sends anything", "[atracectl][usage]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const Bad bad = GENERATE(
      Bad{{"--object", "bad/name"}, "--object 'bad/name' is not a name CANN's layout allows: character 0x2f '/' not allowed"},
      Bad{{"--object", ".."}, "--object '..' is not a name"},
      Bad{{"--object", std::string(32, 'o')}, "--object is 32 bytes long; at most 31"},
      Bad{{"--object", "o", "--device", "5000"}, "--device 5000 is out of range: device ids are 0..1023"},
      Bad{{"--object", "o", "/nonexistent"}, "cannot read '/nonexistent': No such file or directory"});
  std::vector<std::string> args{"emit", "--event", "schedule"};
  args.insert(args.end(), bad.args.begin(), bad.args.end());
  auto r = Ctl(d, args, "x");
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(Has(r.err, bad.says));
  CHECK(r.out.empty());
  CHECK(ListNames(d.trace_dir()) == std::vector<std::string>{".atraced_aged", ".atraced_lock", ".atraced_order"});
  auto s = Ctl(d, {"status", "--json"});
  CHECK(JsonNumber(s.out, "events_begun") == 0);
}

TEST_CASE("atracectl emit from stdin and from a file, each in its own trace dir", "[atracectl]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto from_stdin = Ctl(d, {"emit", "--event", "schedule", "--object", "stdin_obj"}, "piped\n");
  INFO(from_stdin.err);
  REQUIRE(from_stdin.exit_code == 0);
  std::string p1 = Trim(from_stdin.out);
  CHECK(ReadFile(p1) == "piped\n");
  CHECK(p1.substr(p1.rfind('/') + 1) == "schedule_tracer_stdin_obj.txt");

  TempDir tmp;
  std::string binary("\x00\x01\xff payload", 11);
  WriteFile(tmp / "in.bin", binary);
  auto from_file = Ctl(d, {"emit", "--event", "exit", "--object", "file_obj", "--bin", tmp / "in.bin"});
  INFO(from_file.err);
  REQUIRE(from_file.exit_code == 0);
  std::string p2 = Trim(from_file.out);
  CHECK(ReadFile(p2) == binary);
  CHECK(p2.substr(p2.rfind('/') + 1) == "schedule_tracer_file_obj.bin");
  CHECK(Has(p2, "/exit_event_"));

  // Two processes, two trace_{pgid}_{pid}_{time} directories.
  auto Base = [](const std::string& p) { return p.substr(p.rfind('/') + 1); };
  auto proc_dir = [](const std::string& p) {
    std::string ev = p.substr(0, p.rfind('/'));
    return ev.substr(0, ev.rfind('/'));
  };
  CHECK(proc_dir(p1) != proc_dir(p2));
  std::vector<std::string> expected{".atraced_aged", ".atraced_lock", ".atraced_order", Base(proc_dir(p1)), Base(proc_dir(p2))};
  std::sort(expected.begin(), expected.end());
  CHECK(ListNames(d.trace_dir()) == expected);

  auto device = Ctl(d, {"emit", "--event", "stackcore", "--object", "dev", "--device", "7", "--time",
                        "20260102030405006007"}, "d");
  INFO(device.err);
  REQUIRE(device.exit_code == 0);
  CHECK(Has(device.out, "/stackcore_event_"));
  CHECK(Has(device.out, "_20260102030405006007/"));
}

TEST_CASE("atracectl status, list, du and vacuum: human and --json", "[atracectl]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "h"}, "12345").exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "d", "--device", "1"}, "123").exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "exit", "--object", "e"}, "1").exit_code == 0);

  auto status = Ctl(d, {"status"});
  REQUIRE(status.exit_code == 0);
  CHECK(Has(status.out, "root:              " + d.root() + "\n"));
  CHECK(Has(status.out, "host dirs:         1 / 10\n"));
  CHECK(Has(status.out, "device dirs:       1 / 10\n"));
  CHECK(Has(status.out, "exit dirs:         1 / 100\n"));  // the daemon's exit-record-num (issue 23)
  // On disk each file takes a whole block from its first byte, counted so from the start, as
  // a restart would measure it (issue 23, finding 5); by length they hold 9 bytes.
  const uint64_t B = BlockSize(d.trace_dir());
  REQUIRE(B >= 512);
  const std::string used = std::to_string(3 * B);
  CHECK(Has(status.out, "bytes used:        " + used + " ("));
  CHECK(Has(status.out, "bytes apparent:    9 (9 B) by length\n"));
  CHECK(Has(status.out, "bytes written:     " + used + " on disk, 9 by length\n"));

  auto sj = Ctl(d, {"status", "--json"});
  REQUIRE(sj.exit_code == 0);
  CHECK(sj.out.front() == '{');
  CHECK(Trim(sj.out).back() == '}');
  CHECK(Has(sj.out, "\"root\":\"" + d.root() + "\""));
  CHECK(JsonNumber(sj.out, "record_num") == 10);
  CHECK(Has(sj.out, "\"host\":{\"dirs\":1,\"limit\":10,\"bytes\":" + std::to_string(B) + ",\"apparent_bytes\":5}"));
  CHECK(Has(sj.out, "\"device\":{\"dirs\":1,\"limit\":10,\"bytes\":" + std::to_string(B) + ",\"apparent_bytes\":3}"));
  CHECK(Has(sj.out, "\"exit\":{\"dirs\":1,\"limit\":100,\"bytes\":" + std::to_string(B) + ",\"apparent_bytes\":1}"));
  CHECK(JsonNumber(sj.out, "bytes_used") == static_cast<long long>(3 * B));
  CHECK(JsonNumber(sj.out, "bytes_apparent") == 9);
  CHECK(JsonNumber(sj.out, "bytes_written_apparent") == 9);
  CHECK(JsonNumber(sj.out, "clients") == 1);  // this very atracectl
  CHECK(JsonNumber(sj.out, "events_begun") == 3);
  CHECK(JsonNumber(sj.out, "bytes_written") == static_cast<long long>(3 * B));

  auto list = Ctl(d, {"list"});
  REQUIRE(list.exit_code == 0);
  CHECK(Has(list.out, "SEQ\tCLASS\tKIND\tDEVICE\tPID\tUID\tCOMM\tHOW\tSIZE\tAPPARENT\tTIME\tAGE\tPATH\tSTATE\tJOB\tRANK\n"));
  CHECK(Has(list.out, "\tdevice\tschedule\t"));
  CHECK(Has(list.out, "\texit\texit\t-\t"));
  auto lj = Ctl(d, {"list", "--json"});
  REQUIRE(lj.exit_code == 0);
  CHECK(lj.out.rfind("{\"entries\":[{\"seq\":", 0) == 0);
  std::regex entry("\\{\"seq\":[0-9]+,\"class\":\"(host|device|exit)\",\"kind\":\"[a-z]+\",\"device_id\":[0-9]+,"
                   "\"pid\":[0-9]+,\"uid\":[0-9]+,\"comm\":\"atracectl\",\"bytes\":[0-9]+,\"apparent_bytes\":[0-9]+,\"created_unix_us\":[0-9]+,\"age_s\":[0-9]+,\"how\":\"(report|exit)\",\"signal\":null,"
                   "\"path\":\"trace_[0-9]+_[0-9]+_[0-9]{20}/[a-z]+_event_[0-9]+_[0-9]{20}\",\"incomplete\":false,\"job\":null,\"rank\":null,\"world_size\":null\\}");
  auto begin = std::sregex_iterator(lj.out.begin(), lj.out.end(), entry);
  CHECK(std::distance(begin, std::sregex_iterator()) == 3);
  CHECK(Has(lj.out, "\"class\":\"device\",\"kind\":\"schedule\",\"device_id\":1,"));
  CHECK(Has(lj.out, "\"uid\":" + std::to_string(::getuid()) + ","));

  auto du = Ctl(d, {"du"});
  REQUIRE(du.exit_code == 0);
  const std::string b = std::to_string(B);
  CHECK(du.out == b + "\thost\t5\n" + b + "\tdevice\t3\n" + b + "\texit\t1\n" + used + "\ttotal\t9\n");
  auto duj = Ctl(d, {"du", "--json"});
  CHECK(Trim(duj.out) ==
        "{\"host\":" + b + ",\"device\":" + b + ",\"exit\":" + b + ",\"total\":" + used +
            ",\"apparent\":{\"host\":5,\"device\":3,\"exit\":1,\"total\":9}}");

  auto dry = Ctl(d, {"vacuum", "--dry-run"});
  REQUIRE(dry.exit_code == 0);
  CHECK(dry.out == "would remove 0 directories\n");
  auto vac = Ctl(d, {"vacuum", "--json"});
  REQUIRE(vac.exit_code == 0);
  CHECK(Trim(vac.out) == "{\"dry_run\":false,\"removed\":[]}");
}

namespace {
// A strict reading of the text exposition format where promtool is missing: every sample's
// family has a HELP and a TYPE line before it, counters end in _total, values are integers.
std::string ExpositionProblem(const std::string& text) {
  std::map<std::string, std::string> types;
  std::set<std::string> helped;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first, name, type;
    words >> first;
    if (first == "#") {
      words >> type >> name;
      if (type == "HELP") helped.insert(name);
      if (type == "TYPE") words >> types[name];
      continue;
    }
    const std::string family = first.substr(0, first.find('{'));
    if (!helped.count(family) || !types.count(family)) return "no HELP/TYPE before " + line;
    if (types[family] == "counter" && family.size() < 6) return "short counter " + family;
    if (types[family] == "counter" && family.compare(family.size() - 6, 6, "_total") != 0) {
      return "counter without _total: " + family;
    }
    std::string value;
    words >> value;
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return "bad value in " + line;
  }
  return "";
}
}  // namespace

TEST_CASE("atracectl status --prometheus passes the exposition format check and counts refusals by reason",
          "[atracectl]") {
  DaemonProcess d({{"--rate-limit-burst", "2"}});
  REQUIRE(d.Start());
  // One process (this test's) over its burst: every atracectl run would be a process of its own.
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello());
  std::string error;
  CHECK_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "o", "x", &error).empty());
  CHECK_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "o", "x", &error).empty());
  CHECK(c->Emit(ATR_EVENT_SCHEDULE, "o", "x", &error).empty());
  CHECK(Has(error, "rate limit"));
  auto text = Ctl(d, {"status", "--prometheus"});
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "atraced_refusals_total{reason=\"rate-limit\"} 1\n"));
  CHECK(Has(text.out, "atraced_event_dirs{class=\"host\"} 2\n"));
  CHECK(Has(text.out, "# TYPE atraced_dirs_aged_total counter\n"));
  CHECK(ExpositionProblem(text.out) == "");
  if (::access("/usr/bin/promtool", X_OK) == 0) {
    auto check = Run({"/usr/bin/promtool", "check", "metrics"}, {.input = text.out});
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
  } else {
    WARN("promtool not installed: checked with the test's own reader only");
  }
  auto json = Ctl(d, {"status", "--json"});
  CHECK(Has(json.out, "\"refused\":{\"max_use\":0,\"keep_free\":0,\"rate_limit\":1"));
  // The shared pools, with this test's connection in its uid's part (issue 21); atracectl's
  // own connection is there too.
  const std::string uid = std::to_string(::getuid());
  CHECK(Has(text.out, "# TYPE atraced_pool_uid_held gauge\n"));
  CHECK(Has(text.out, "atraced_pool_limit{pool=\"connections\"} 16384\n"));
  CHECK(Has(text.out, "atraced_pool_uid_share{pool=\"rings\"} 8192\n"));
  CHECK(Has(text.out, "atraced_pool_uid_held{pool=\"connections\",uid=\"" + uid + "\"} 2\n"));
  CHECK(Has(json.out, "\"shares\":[{\"pool\":\"connections\",\"held\":2,\"limit\":16384,\"uid_share\":4096,"
                      "\"uids\":[{\"uid\":" + uid + ",\"held\":2}]}"));
  auto human = Ctl(d, {"status"});
  CHECK(Has(human.out, "shared connections:  2 / 16384 held, at most 4096 per uid: uid " + uid + " 2\n"));
  CHECK(Has(human.out, "shared ring_memory:  0 B / 4.0 GiB held, at most 1.0 GiB per uid\n"));
  auto both = Ctl(d, {"status", "--json", "--prometheus"});
  CHECK(both.exit_code == 2);
  CHECK(Has(both.err, "exclude each other"));
}

TEST_CASE("atracectl status shows each device's traces: events, received, dropped by reason, reconnects",
          "[atracectl][devices]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto none = Ctl(d, {"status", "--json"});
  CHECK(Has(none.out, "\"devices\":[],\"incomplete_dirs\":0}"));
  CHECK_FALSE(Has(Ctl(d, {"status", "--prometheus"}).out, "atraced_device_"));
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_DEVICE_STATS));
  std::string error;
  REQUIRE_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "o", "x", &error, ATR_SIDE_DEVICE, 3).empty());
  atraced::proto::DeviceStats stats;
  stats.device_id = 3;
  stats.received = 4;
  stats.saved = 1;
  stats.dropped_invalid = 2;
  stats.dropped_daemon = 1;
  stats.reconnects = 5;
  std::vector<uint8_t> payload;
  atraced::proto::Encode(stats, payload);
  REQUIRE(c->Call(ATR_OP_DEVICE_STATS, payload)->status == 0);
  auto text = Ctl(d, {"status", "--prometheus"});
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "atraced_device_events_total{device=\"3\"} 1\n"));
  CHECK(Has(text.out, "atraced_device_messages_received_total{device=\"3\"} 4\n"));
  CHECK(Has(text.out, "atraced_device_messages_dropped_total{device=\"3\",reason=\"invalid\"} 2\n"));
  CHECK(Has(text.out, "atraced_device_messages_dropped_total{device=\"3\",reason=\"daemon\"} 1\n"));
  CHECK(Has(text.out, "atraced_device_reconnects_total{device=\"3\"} 5\n"));
  CHECK(ExpositionProblem(text.out) == "");
  if (::access("/usr/bin/promtool", X_OK) == 0) {
    auto check = Run({"/usr/bin/promtool", "check", "metrics"}, {.input = text.out});
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
  }
  auto json = Ctl(d, {"status", "--json"});
  CHECK(Has(json.out, "\"devices\":[{\"device\":3,\"events\":1,\"received\":4,\"saved\":1,"
                      "\"dropped\":{\"invalid\":2,\"daemon\":1},\"reconnects\":5}]"));
  auto human = Ctl(d, {"status"});
  CHECK(Has(human.out, "device 3:          1 events; received 4, saved 1, dropped 2 invalid + 1 daemon, reconnects 5\n"));
}

TEST_CASE("atracectl show prints an event's files, a CANN .bin as asys writes it", "[atracectl][show]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto golden = [](const char* name) {
    return ReadFile(std::string(ATRACED_SOURCE_DIR) + "/tests/proto/data/" + name);
  };
  TempDir tmp;
  WriteFile(tmp / "golden.bin", golden("cann_golden.bin"));
  auto bin = Ctl(d, {"emit", "--event", "schedule", "--object", "golden", "--bin", tmp / "golden.bin"});
  INFO(bin.err);
  REQUIRE(bin.exit_code == 0);
  const std::string bin_path = Trim(bin.out);
  const std::string dir = bin_path.substr(0, bin_path.rfind('/'));
  auto list = Ctl(d, {"list", "--json"});
  const long long seq = JsonNumber(list.out, "seq");
  REQUIRE(seq > 0);
  const std::map<std::string, std::string> utc{{"TZ", "UTC"}};
  auto by_seq = Ctl({"--socket", d.socket(), "show", std::to_string(seq)}, "", utc);
  INFO(by_seq.err);
  REQUIRE(by_seq.exit_code == 0);
  // The header, then exactly what CANN's asys wrote for this file (tests/proto/data).
  CHECK(by_seq.out == "==> " + bin_path + " <==\n" + golden("cann_golden.asys.txt"));
  auto by_dir = Ctl({"show", dir}, "", utc);  // no daemon needed for a path
  CHECK(by_dir.exit_code == 0);
  CHECK(by_dir.out == by_seq.out);
  auto json = Ctl({"show", dir, "--json"}, "", utc);
  CHECK(json.exit_code == 0);
  CHECK(Has(json.out, "\"decoded_as\":\"cann-bin\",\"text\":\"" + golden("cann_golden.asys.txt").substr(0, 40)));

  // A .txt is shown as it is.
  auto text = Ctl(d, {"emit", "--event", "schedule", "--object", "plain"}, "line one\nline two\n");
  REQUIRE(text.exit_code == 0);
  const std::string text_path = Trim(text.out);
  auto shown = Ctl({"show", text_path.substr(0, text_path.rfind('/'))});
  CHECK(shown.out == "==> " + text_path + " <==\nline one\nline two\n");
}

TEST_CASE("atracectl show: an unknown SEQ, a file, a .bin asys cannot read, say so", "[atracectl][show]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto unknown = Ctl(d, {"show", "4242"});
  CHECK(unknown.exit_code == 1);
  CHECK(Has(unknown.err, "no event directory has SEQ 4242"));
  TempDir tmp;
  WriteFile(tmp / "f", "x");
  auto file = Ctl(d, {"show", tmp / "f"});
  CHECK(file.exit_code == 2);
  CHECK(Has(file.err, "is not a directory"));
  auto missing = Ctl(d, {"show", tmp / "nowhere"});
  CHECK(missing.exit_code == 1);
  CHECK(Has(missing.err, "No such file or directory"));
  // A .bin whose struct segment lies: the file is named with the reason, the others shown.
  std::string lying = ReadFile(std::string(ATRACED_SOURCE_DIR) + "/tests/proto/data/cann_golden.bin");
  lying[48 + 40 + 40 + 18 * 40 + 34] = 6;  // an int32 array of 6 bytes
  lying[48 + 40 + 40 + 18 * 40 + 35] = 0;
  // An event directory of a bundle's copy of a root (atrace/trace_*/KIND_event_*).
  const std::string ev = tmp / "atrace/trace_7_7_20261203080000000000/schedule_event_7_20261203080000000001";
  REQUIRE(Run({"/bin/mkdir", "-p", ev}).exit_code == 0);
  WriteFile(ev + "/schedule_tracer_bad.bin", lying);
  WriteFile(ev + "/schedule_tracer_good.txt", "fine\n");
  auto bad = Ctl({"show", ev});
  CHECK(bad.exit_code == 1);
  CHECK(Has(bad.out, "(cannot decode as asys would: a field's type and length do not fit the record)\n"));
  CHECK(Has(bad.out, "schedule_tracer_good.txt <==\nfine\n"));
  auto bad_json = Ctl({"show", ev, "--json"});
  CHECK(bad_json.exit_code == 1);
  CHECK(Has(bad_json.out, "\"error\":\"cannot decode as asys would"));
  auto usage = Ctl(d, {"show"});
  CHECK(usage.exit_code == 2);
  // Any other directory is refused, not listed: /etc, a directory of an event directory's
  // name elsewhere, a link of that name to /etc, the process directory above an event's.
  REQUIRE(Run({"/bin/mkdir", "-p", tmp / "elsewhere/trace_7_7_20261203080000000000/schedule_event_7_20261203080000000001"}).exit_code == 0);
  REQUIRE(Run({"/bin/ln", "-s", "/etc", tmp / "atrace/trace_7_7_20261203080000000000/exit_event_7_20261203080000000002"}).exit_code == 0);
  for (const std::string& not_event : {std::string("/etc"), tmp / "elsewhere/trace_7_7_20261203080000000000/schedule_event_7_20261203080000000001",
                                       tmp / "atrace/trace_7_7_20261203080000000000/exit_event_7_20261203080000000002",
                                       tmp / "atrace/trace_7_7_20261203080000000000", tmp / "atrace"}) {
    INFO(not_event);
    auto refused = Ctl(d, {"show", not_event});
    CHECK(refused.exit_code == 2);
    CHECK(Has(refused.err, "is not an event directory"));
    CHECK(refused.out.empty());
  }
}

TEST_CASE("atracectl list filters combine: pid, uid, kind, side, device, since and until", "[atracectl][list]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "a"}, "x").exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "stackcore", "--object", "b"}, "x").exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "c", "--device", "3"}, "x").exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "e", "--device", "5"}, "x").exit_code == 0);
  auto count = [&](std::vector<std::string> filter) {
    filter.insert(filter.begin(), {"list", "--json"});
    auto r = Ctl(d, filter);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return std::count(r.out.begin(), r.out.end(), '{') - 1;  // one object per entry, one around
  };
  CHECK(count({}) == 4);
  CHECK(count({"--kind", "schedule"}) == 3);
  CHECK(count({"--kind", "stackcore"}) == 1);
  CHECK(count({"--side", "device"}) == 2);
  CHECK(count({"--side", "host", "--kind", "schedule"}) == 1);
  CHECK(count({"--device", "3"}) == 1);
  CHECK(count({"--device", "3", "--kind", "stackcore"}) == 0);
  CHECK(count({"--uid", std::to_string(::getuid())}) == 4);
  CHECK(count({"--uid", std::to_string(::getuid() + 1)}) == 0);
  CHECK(count({"--pid", "1"}) == 0);  // each emit was its own process
  CHECK(count({"--since", "-1h"}) == 4);
  CHECK(count({"--since", "+1h"}) == 0);
  CHECK(count({"--until", "-1h"}) == 0);
  CHECK(count({"--since", "today", "--until", "tomorrow"}) == 4);
  CHECK(count({"--since", "yesterday", "--until", "now"}) == 4);
  CHECK(count({"--until", "2000-01-01"}) == 0);
  CHECK(count({"--since", "2000-01-01 00:00"}) == 4);
  CHECK(count({"--since", "@0"}) == 4);
  // The human table names the device of a device directory, "-" for the host's.
  auto table = Ctl(d, {"list", "--device", "5"});
  CHECK(Has(table.out, "\tdevice\tschedule\t5\t"));
  CHECK(Has(Ctl(d, {"list", "--side", "host"}).out, "\tstackcore\t-\t"));
  // COMM: the program each directory was made for (here atracectl's emit), matched whole.
  CHECK(count({"--comm", "atracectl"}) == 4);
  CHECK(count({"--comm", "atracectl", "--device", "5"}) == 1);
  CHECK(count({"--comm", "atrace"}) == 0);
  CHECK(Has(table.out, "\t" + std::to_string(::getuid()) + "\tatracectl\t"));
}

// COMM is kept by the daemon's order log, never inside CANN's event directories; a root
// whose log predates it lists '-' (JSON null) and matches no --comm.
TEST_CASE("atracectl list: COMM survives a restart, an older root shows '-'", "[atracectl][list]") {
  TempDir tmp;
  const std::string root = tmp / "root";
  std::string dir;
  {
    DaemonProcess d({{}, {}, true, 10, std::nullopt, root});
    REQUIRE(d.Start());
    auto made = Ctl(d, {"emit", "--event", "schedule", "--object", "o"}, "x");
    REQUIRE(made.exit_code == 0);
    dir = made.out.substr(0, made.out.rfind('/'));
    CHECK(ListNames(dir) == std::vector<std::string>{"schedule_tracer_o.txt"});  // nothing of ours inside
    REQUIRE(d.Stop() == 0);
  }
  {
    DaemonProcess d({{}, {}, true, 10, std::nullopt, root});
    REQUIRE(d.Start());
    CHECK(Has(Ctl(d, {"list", "--json"}).out, "\"comm\":\"atracectl\""));
    REQUIRE(d.Stop() == 0);
  }
  // The log as an older daemon wrote it: no program records.
  const std::string log_path = root + "/atrace/.atraced_order";
  std::string log = ReadFile(log_path), older;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("c ", 0) != 0) older += line + "\n";
  }
  CHECK(older.size() < log.size());
  REQUIRE(::unlink(log_path.c_str()) == 0);
  WriteFile(log_path, older);
  DaemonProcess d({{}, {}, true, 10, std::nullopt, root});
  REQUIRE(d.Start());
  auto list = Ctl(d, {"list"});
  CHECK(Has(list.out, "\t" + std::to_string(::getuid()) + "\t-\t"));
  CHECK(Has(Ctl(d, {"list", "--json"}).out, "\"comm\":null,"));
  auto none = Ctl(d, {"list", "--comm", "atracectl", "--json"});
  CHECK(none.out == "{\"entries\":[]}\n");
}

TEST_CASE("atracectl list refuses filters that mean nothing, naming the forms", "[atracectl][list][usage]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--kind", "crash"}, "--kind crash: use schedule, stackcore or exit"},
           {{"--side", "npu"}, "--side npu: use host or device"},
           {{"--since", "last tuesday"}, "--since: 'last tuesday' is not a time"},
           {{"--until", "2026-02-31"}, "--until: '2026-02-31' is not a time"},
           {{"--since", "-5parsecs"}, "'-5parsecs' is not a time"},
           {{"--since", "2026-12-01 25:00"}, "is not a time"},
           {{"--since", "now", "--until", "-1d"}, "--since is after --until"},
           {{"--pid", "x"}, "pid"}}) {
    std::vector<std::string> argv{"list"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = Ctl(d, argv);
    INFO(args[0] << " " << args[1] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(Has(r.err, message));
  }
}

namespace {

// `atracectl ARGS` in the background with its stdout on a pipe; killed when destroyed.
struct Background {
  pid_t pid = -1;
  int out = -1;
  explicit Background(const std::vector<std::string>& args) {
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(p[1], 1);
      std::vector<const char*> argv{ATRACECTL_BINARY};
      for (const auto& a : args) argv.push_back(a.c_str());
      argv.push_back(nullptr);
      ::execv(argv[0], const_cast<char**>(argv.data()));
      ::_exit(127);
    }
    ::close(p[1]);
    out = p[0];
  }
  ~Background() {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    ::close(out);
  }
  // The next `lines` lines, waiting at most `timeout` for each.
  std::vector<std::string> Lines(size_t lines, std::chrono::milliseconds timeout) {
    std::vector<std::string> got;
    while (got.size() < lines) {
      const size_t nl = buffer.find('\n');
      if (nl != std::string::npos) {
        got.push_back(buffer.substr(0, nl));
        buffer.erase(0, nl + 1);
        continue;
      }
      pollfd p{out, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) break;
      char buf[4096];
      const ssize_t n = ::read(out, buf, sizeof buf);
      if (n <= 0) break;
      buffer.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  std::string buffer;
};

}  // namespace

TEST_CASE("atracectl list --follow prints each new directory as it is made, filters applied", "[atracectl][follow]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "before"}, "x").exit_code == 0);
  Background all({"--socket", d.socket(), "list", "--follow", "--json"});
  Background exits({"--socket", d.socket(), "list", "--follow", "--kind", "exit"});
  // What was there first, then the new ones as they come (JSON: one object per line).
  auto first = all.Lines(1, std::chrono::seconds(10));
  REQUIRE(first.size() == 1);
  CHECK(Has(first[0], "\"seq\":1,"));
  REQUIRE(exits.Lines(1, std::chrono::seconds(10)) == std::vector<std::string>{
                                                         "SEQ\tCLASS\tKIND\tDEVICE\tPID\tUID\tCOMM\tHOW\tSIZE\tAPPARENT\tTIME\tAGE\tPATH\tSTATE\tJOB\tRANK"});
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "one"}, "x").exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "exit", "--object", "two"}, "x").exit_code == 0);
  auto next = all.Lines(2, std::chrono::seconds(10));
  const auto took = std::chrono::steady_clock::now() - t0;
  REQUIRE(next.size() == 2);
  CHECK(Has(next[0], "\"seq\":2,\"class\":\"host\",\"kind\":\"schedule\""));
  CHECK(Has(next[1], "\"seq\":3,\"class\":\"exit\",\"kind\":\"exit\""));
  auto only_exit = exits.Lines(1, std::chrono::seconds(10));
  REQUIRE(only_exit.size() == 1);
  CHECK(only_exit[0].rfind("3\texit\texit\t-\t", 0) == 0);
  WARN("follow: two new directories printed " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                                              << " ms after the first emit began");
}

namespace {

// The Trace Event Format's rules, checked on an export written one event per line: every
// event has name, ph, pid and tid (and ts unless metadata); instant events are in time order
// on each track; every process and every thread track with an event is named by metadata.
// Returns the instant events seen, or -1 after a failed check.
long CheckTraceEventFormat(const std::string& json, std::map<std::string, std::string>* names) {
  std::istringstream in(json);
  std::string line;
  std::getline(in, line);
  if (line != "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[") return -1;
  const std::regex meta(R"re(^\{"name":"(process_name|thread_name)","ph":"M","pid":([0-9]+),"tid":([0-9]+),"args":\{"name":"([^"]*)"\}\},?$)re");
  const std::regex instant(R"re(^\{"name":"[^"]+","ph":"i","s":"t","ts":([0-9]+),"pid":([0-9]+),"tid":([0-9]+),"args":\{"text":".*"\}\},?$)re");
  std::map<std::string, long long> last_ts;  // per "pid/tid"
  std::set<std::string> tracks_used;
  long instants = 0;
  while (std::getline(in, line)) {
    if (line == "]}") break;
    std::smatch m;
    if (std::regex_match(line, m, meta)) {
      (*names)[m[1].str() == "process_name" ? m[2].str() : m[2].str() + "/" + m[3].str()] = m[4];
      continue;
    }
    if (!std::regex_match(line, m, instant)) {
      UNSCOPED_INFO("not an event of the format: " << line);
      return -1;
    }
    const std::string track = m[2].str() + "/" + m[3].str();
    const long long ts = std::stoll(m[1]);
    if (last_ts.count(track) && ts < last_ts[track]) return -1;
    last_ts[track] = ts;
    tracks_used.insert(track);
    ++instants;
  }
  for (const auto& track : tracks_used) {
    if (!names->count(track) || !names->count(track.substr(0, track.find('/')))) {
      UNSCOPED_INFO("track without a name: " << track);
      return -1;
    }
  }
  return instants;
}

}  // namespace

TEST_CASE("atracectl export --format chrome-json follows the Trace Event Format's rules", "[atracectl][export]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  TempDir tmp;
  WriteFile(tmp / "golden.bin", ReadFile(std::string(ATRACED_SOURCE_DIR) + "/tests/proto/data/cann_golden.bin"));
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "golden", "--bin", tmp / "golden.bin"}).exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "runtime"},
              "2026-12-03 08:00:00.000.002 CqReport:devId=0,stmId=2\n2026-12-03 08:00:00.000.001 launch task 7\n")
              .exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "ts_0", "--device", "3"},
              "2026-12-03 08:00:01.000.000 aicore error\n")
              .exit_code == 0);
  const std::map<std::string, std::string> utc{{"TZ", "UTC"}};
  auto exported = Ctl({"--socket", d.socket(), "export", "--format", "chrome-json"}, "", utc);
  INFO(exported.err << exported.out.substr(0, 2000));
  REQUIRE(exported.exit_code == 0);
  std::map<std::string, std::string> names;
  // 6 records of the .bin, 2 of the runtime's .txt, 1 of the device's.
  CHECK(CheckTraceEventFormat(exported.out, &names) == 9);
  // Named by the object, not the record's first word.
  CHECK(Has(exported.out, "\"name\":\"runtime\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1796284800000002,"));
  CHECK(Has(exported.out, "\"args\":{\"text\":\"launch task 7\"}"));
  CHECK(Has(exported.out, "\"name\":\"golden\",\"ph\":\"i\""));  // a .bin record, named by its object
  CHECK_FALSE(Has(exported.out, "\"name\":\"CqReport\""));
  CHECK(exported.out.find("launch task 7") < exported.out.find("CqReport:devId=0,stmId=2"));  // time order
  bool device_named = false, object_named = false;
  for (const auto& [key, name] : names) {
    device_named |= name == "device 3";
    object_named |= name == "runtime";
  }
  CHECK(device_named);
  CHECK(object_named);
  // Processes by their COMM (each emit was an atracectl process), never "pid N".
  for (const auto& [key, name] : names) {
    INFO(key << " " << name);
    if (key.find('/') == std::string::npos) CHECK((name == "atracectl" || name == "device 3"));
  }
  // The filters of list, and a file that is written once.
  auto device_only = Ctl({"--socket", d.socket(), "export", "--format", "chrome-json", "--side", "device"}, "", utc);
  CHECK(CheckTraceEventFormat(device_only.out, &names) == 1);
  auto to_file = Ctl(d, {"export", "--format", "chrome-json", "--output", tmp / "trace.json"});
  CHECK(to_file.exit_code == 0);
  CHECK(ReadFile(tmp / "trace.json").rfind("{\"displayTimeUnit\"", 0) == 0);
  auto again = Ctl(d, {"export", "--format", "chrome-json", "--output", tmp / "trace.json"});
  CHECK(again.exit_code == 1);
  CHECK(Has(again.err, "File exists"));
  CHECK(Ctl(d, {"export"}).exit_code == 2);
  auto html = Ctl(d, {"export", "--format", "svg"});
  CHECK(html.exit_code == 2);
  CHECK(Has(html.err, "the formats are chrome-json, html and tar"));
}

namespace {

// This process's COMM, as the daemon's LIST records it.
std::string OwnComm() { return Trim(ReadFile("/proc/self/comm")); }

constexpr const char* kRecords =
    "2026-12-03 08:00:00.000.001 about to be killed\n2026-12-03 08:00:00.000.002 launch task 7\n";

// Through one connection, as one process: a schedule directory, then a stackcore directory
// with the same ring saved again and a crash report, then one with the report of a SIGKILL.
void WriteCrashAndDeath(const DaemonProcess& d) {
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello());
  const std::string crash = "atraced: process " + std::to_string(::getpid()) + " (" + OwnComm() +
                            ") caught a fatal signal\nsignal: SIGSEGV\ncode: SEGV_MAPERR\nfault address: 0x0\n\n"
                            "[stack]\nThread 1 (LWP 1):\n#0 0x1 in crashing_frame\n";
  const std::string death = "atraced: process " + std::to_string(::getpid()) + " (" + OwnComm() +
                            ") ended without GOODBYE\nhow: killed by signal SIGKILL\noom: not by the OOM killer\n";
  REQUIRE(WriteEvent(*c, 1, ATR_EVENT_SCHEDULE, {{ObjectFileRequest(0, 0, "runtime"), kRecords}}) == "");
  REQUIRE(WriteEvent(*c, 2, ATR_EVENT_STACKCORE,
                     {{ObjectFileRequest(0, 0, "runtime"), kRecords}, {StackcoreFileRequest("crasher"), crash}}) == "");
  REQUIRE(WriteEvent(*c, 3, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("crasher", 9), death}}) == "");
}

}  // namespace

TEST_CASE("atracectl export: one event per record, named by its object, in a process named by its COMM",
          "[atracectl][export]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  WriteCrashAndDeath(d);
  const std::map<std::string, std::string> utc{{"TZ", "UTC"}};
  auto exported = Ctl({"--socket", d.socket(), "export", "--format", "chrome-json"}, "", utc);
  INFO(exported.err << exported.out.substr(0, 3000));
  REQUIRE(exported.exit_code == 0);
  std::map<std::string, std::string> names;
  // The two records once each, though two directories hold them; the crash and the death.
  CHECK(CheckTraceEventFormat(exported.out, &names) == 4);
  CHECK(Has(exported.err, "2 records kept in more than one directory of a process, exported once"));
  CHECK(Has(exported.out, "{\"name\":\"runtime\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1796284800000001,"));
  CHECK_FALSE(Has(exported.out, "\"name\":\"about\""));
  CHECK(Has(exported.out, "{\"name\":\"crash\",\"ph\":\"i\""));
  CHECK(Has(exported.out, "{\"name\":\"death\",\"ph\":\"i\""));
  CHECK(names[std::to_string(::getpid())] == OwnComm());
  // The same dedupe in the page: its data holds each text once and counts four records.
  TempDir tmp;
  auto page = Ctl(d, {"export", "--format", "html", "--output", tmp / "t.html"});
  REQUIRE(page.exit_code == 0);
  const std::string html = ReadFile(tmp / "t.html");
  CHECK(Has(html, "\"ev\":{\"dt\":[0,1,"));
  size_t at = html.find("about to be killed"), count = 0;
  for (; at != std::string::npos; at = html.find("about to be killed", at + 1)) ++count;
  CHECK(count == 1);
}

TEST_CASE("atracectl list says how each directory came to be and when, in local time", "[atracectl][list]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  WriteCrashAndDeath(d);
  {
    auto c = RawClient::Connect(d.socket());
    REQUIRE(c);
    REQUIRE(c->Hello());
    const std::string head = "atraced: process 1 (x) ";
    REQUIRE(WriteEvent(*c, 4, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("x"), head + "asked for its stacks; it runs on\nsignal: SIGUSR2\n"}}) == "");
    REQUIRE(WriteEvent(*c, 5, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("x", 9), head + "ended without GOODBYE\nhow: killed by signal SIGKILL\noom: killed by the OOM killer (x)\n"}}) == "");
    // Bad input: a report whose signal would move the terminal's cursor; one of no known form.
    REQUIRE(WriteEvent(*c, 6, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("x"), head + "caught a fatal signal\nsignal: SIG\x1b[2J\n"}}) == "");
    REQUIRE(WriteEvent(*c, 7, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("x"), "no header at all\n"}}) == "");
    // The daemon's own form ("11 (SIGSEGV)") and a bare number: both named as coredumpctl names them.
    REQUIRE(WriteEvent(*c, 8, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("x"), head + "caught a fatal signal\nsignal: 7 (SIGBUS)\n"}}) == "");
    REQUIRE(WriteEvent(*c, 9, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("x"), head + "caught a fatal signal\nsignal: 6\n"}}) == "");
  }
  REQUIRE(Ctl(d, {"emit", "--event", "exit", "--object", "o"}, "x\n").exit_code == 0);
  auto list = Ctl({"--socket", d.socket(), "list"}, "", {{"TZ", "CST-8"}});
  INFO(list.out << list.err);
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.rfind("SEQ\tCLASS\tKIND\tDEVICE\tPID\tUID\tCOMM\tHOW\tSIZE\tAPPARENT\tTIME\tAGE\tPATH\tSTATE\tJOB\tRANK\n", 0) == 0);
  const std::string comm = "\t" + OwnComm() + "\t";
  for (const std::string& how : {comm + "report\t", comm + "crash SIGSEGV\t", comm + "killed SIGKILL\t", comm + "dump\t",
                                 comm + "oom\t", comm + "crash SIG\\x1b[2J\t", comm + "crash SIGBUS\t", comm + "crash SIGABRT\t", comm + "stackcore\t", std::string("\tatracectl\texit\t")}) {
    INFO(how);
    CHECK(Has(list.out, how));
  }
  // TIME is the directory's creation in local time (CST-8: UTC+8), beside AGE.
  auto json = Ctl(d, {"list", "--json"});
  const long long created = JsonNumber(json.out, "created_unix_us");
  REQUIRE(created > 0);
  const time_t local = static_cast<time_t>(created / 1000000) + 8 * 3600;
  struct tm tm {};
  ::gmtime_r(&local, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "\t%Y-%m-%d %H:%M:%S\t", &tm);
  CHECK(Has(list.out, stamp));
  // --json: the name as the text says it, and the number.
  CHECK(Has(json.out, "\"how\":\"crash SIGSEGV\",\"signal\":11,"));
  CHECK(Has(json.out, "\"how\":\"crash SIGBUS\",\"signal\":7,"));
  CHECK(Has(json.out, "\"how\":\"crash SIGABRT\",\"signal\":6,"));
  CHECK(Has(json.out, "\"how\":\"killed SIGKILL\",\"signal\":9,"));
  CHECK(Has(json.out, "\"how\":\"crash SIG\\u001b[2J\",\"signal\":null,"));
}

TEST_CASE("atracectl info: a PID, the process of a SEQ, or the latest of a COMM, and bad input refused",
          "[atracectl][info]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  WriteCrashAndDeath(d);
  const std::string pid = std::to_string(::getpid());
  auto by_pid = Ctl(d, {"info", pid});
  INFO(by_pid.err);
  REQUIRE(by_pid.exit_code == 0);
  CHECK(Has(by_pid.out, "           PID: " + pid + "\n"));
  CHECK(Has(by_pid.out, "        Signal: SIGSEGV\n"));
  auto by_seq = Ctl(d, {"info", "--seq", "2"});
  CHECK(by_seq.exit_code == 0);
  CHECK(by_seq.out == by_pid.out);
  auto by_comm = Ctl(d, {"info", "--comm", OwnComm()});
  CHECK(by_comm.exit_code == 0);
  CHECK(by_comm.out == by_pid.out);
  // Two processes of one COMM: the latest, and stderr says there are others.
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "a"}, "x\n").exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "b"}, "x\n").exit_code == 0);
  auto latest = Ctl(d, {"info", "--comm", "atracectl", "--json"});
  CHECK(latest.exit_code == 0);
  CHECK(Has(latest.err, "2 processes named atracectl have event directories; this is the latest, pid "));
  CHECK(JsonNumber(Ctl(d, {"info", "--seq", "5", "--json"}).out, "pid") == JsonNumber(latest.out, "pid"));
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  } cases[] = {
      {{"info"}, 2, "give the PID of a process with event directories, --seq SEQ or --comm NAME"},
      {{"info", pid, "--seq", "2"}, 2, "give one of PID, --seq SEQ and --comm NAME"},
      {{"info", "--seq", "2", "--comm", "x"}, 2, "give one of PID, --seq SEQ and --comm NAME"},
      {{"info", "--seq", "x2"}, 2, "--seq 'x2' is not a SEQ"},
      {{"info", "--seq=-1"}, 2, "--seq '-1' is not a SEQ"},
      {{"info", "--seq", "0"}, 2, "--seq '0' is not a SEQ"},
      {{"info", "--comm", ""}, 2, "--comm needs a name"},
      {{"info", "12x"}, 2, "'12x' is not a process id"},
      {{"info", "--seq", "4242"}, 1, "no event directory has SEQ 4242"},
      {{"info", "--comm", "no\x1b[2Jsuch"}, 1, "no event directory of a process named no\\x1b[2Jsuch"},
  };
  for (const auto& c : cases) {
    auto r = Ctl(d, c.args);
    INFO(r.err);
    CHECK(r.exit_code == c.exit_code);
    CHECK(Has(r.err, c.says));
    CHECK(r.out.empty());
  }
}

TEST_CASE("atracectl export --format tar bundles the selected directories with the host's facts", "[atracectl][export]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto a = Ctl(d, {"emit", "--event", "schedule", "--object", "kept"}, "x\n");
  auto b = Ctl(d, {"emit", "--event", "exit", "--object", "filtered"}, "y\n");
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  TempDir tmp;
  const std::string bundle = tmp / "report.tar.gz";
  auto made = Ctl(d, {"export", "--format", "tar", "--kind", "schedule", "--output", bundle});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  auto listing = Run({"/bin/tar", "-tzf", bundle});
  REQUIRE(listing.exit_code == 0);
  for (const char* member : {"status.json\n", "version.txt\n", "uname.txt\n"}) CHECK(Has(listing.out, member));
  const std::string kept = Trim(a.out);
  const std::string in_bundle = "atrace/" + kept.substr(d.trace_dir().size() + 1);
  CHECK(Has(listing.out, in_bundle + "\n"));
  CHECK_FALSE(Has(listing.out, "schedule_tracer_filtered"));  // an exit dir: not selected
  auto status = Run({"/bin/tar", "-xzOf", bundle, "status.json"});
  CHECK(status.out.rfind("{\"root\":", 0) == 0);
  CHECK(Has(Run({"/bin/tar", "-xzOf", bundle, "version.txt"}).out, "(protocol 1.1)"));
  CHECK(Run({"/bin/tar", "-xzOf", bundle, in_bundle}).out == "x\n");
  // Never over a file; a tar without --output is a usage error.
  auto again = Ctl(d, {"export", "--format", "tar", "--output", bundle});
  CHECK(again.exit_code == 1);
  CHECK(Has(again.err, "File exists"));
  CHECK(Ctl(d, {"export", "--format", "tar"}).exit_code == 2);
}

TEST_CASE("atracectl --version names the protocol it speaks", "[atracectl]") {
  auto v = Ctl({"--version"});
  CHECK(v.exit_code == 0);
  CHECK(std::regex_match(v.out, std::regex("atracectl [0-9]+\\.[0-9]+\\.[0-9]+ \\(protocol 1\\.1\\)\n")));
}

TEST_CASE("atracectl export --format html: one page with no network, a timeline of groups, marks and a ruler",
          "[atracectl][export][html]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  WriteCrashAndDeath(d);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "runtime"},
              "2026-12-03 08:00:00.000.001 launch task 7\n2026-12-03 08:00:00.500.000 CqReport </script><b>x</b>\n")
              .exit_code == 0);
  // One record that, escaped as "</" only, put the tokenizer in "script data double escaped"
  // and swallowed the drawing script: nothing was drawn, everyone's records included.
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "hostile"},
              "2026-12-03 08:00:00.700.000 <!--<script> & \xe2\x80\xa8 >\n")
              .exit_code == 0);
  REQUIRE(Ctl(d, {"emit", "--event", "schedule", "--object", "ts_0", "--device", "3"},
              "2026-12-03 08:00:01.000.000 aicore error\n")
              .exit_code == 0);
  TempDir tmp;
  const std::string page = tmp / "timeline.html";
  auto made = Ctl(d, {"export", "--format", "html", "--output", page});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const std::string html = ReadFile(page);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // Self-contained: nothing fetched.
  for (const char* outside : {"https://", "src=", "<link", "fetch(", "XMLHttpRequest", "@import"}) {
    INFO(outside);
    CHECK_FALSE(Has(html, outside));
  }
  // A record's text cannot change the data block's parse: the data holds no '<' (nor '>',
  // '&', U+2028, U+2029), each written as JSON's \uXXXX.
  const std::string open_data = "<script type=\"application/json\" id=\"data\">";
  const size_t data_at = html.find(open_data);
  REQUIRE(data_at != std::string::npos);
  const size_t data_end = html.find("</script>", data_at);
  REQUIRE(data_end != std::string::npos);
  const std::string data = html.substr(data_at + open_data.size(), data_end - data_at - open_data.size());
  for (const char* inert : {"<", ">", "&", "\xe2\x80\xa8"}) {
    INFO(inert);
    CHECK_FALSE(Has(data, inert));
  }
  CHECK(Has(data, "\"CqReport \\u003c/script\\u003e\\u003cb\\u003ex\\u003c/b\\u003e"));
  CHECK(Has(data, "\\u003c!--\\u003cscript\\u003e \\u0026 \\u2028 \\u003e"));
  if (::access("/usr/bin/chromium", X_OK) != 0) {
    WARN("no /usr/bin/chromium: the page was checked, not rendered");
    return;
  }
  // Rendered headless, as root in CI, with nothing reaching for the network. A page beside it
  // loads it in a frame, acts on it as a user would (keys, the search box, a click) and writes
  // what the page then shows into its own DOM, which --dump-dom prints.
  auto chromium = [&](std::vector<std::string> args) {
    std::vector<std::string> argv{"/usr/bin/timeout", "90", "/usr/bin/chromium", "--headless", "--no-sandbox",
                                  "--disable-gpu", "--disable-quic", "--no-first-run",
                                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                  "--allow-file-access-from-files", "--user-data-dir=" + (tmp / "profile")};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  };
  WriteFile(tmp / "drive.html", R"html(<!DOCTYPE html><html><body><pre id="result">not run</pre>
<iframe id="f" src="timeline.html" width="1200" height="700"></iframe>
<script>
document.getElementById('f').onload = function () {
  var out = {}, w = this.contentWindow, doc = w.document, b = doc.body.dataset;
  try {
    function state(name) { out[name] = {groups: +b.groups, tracks: +b.tracks, rows: +b.rows, ticks: b.ticks, hits: +b.hits, drawn: JSON.parse(b.drawn), labels: b.labels}; }
    function key(k) { w.dispatchEvent(new w.KeyboardEvent('keydown', {key: k, bubbles: true})); }
    var chart = doc.getElementById('chart'), g = chart.getContext('2d'), scale = chart.width / chart.clientWidth;
    function pixel(p) { var d = g.getImageData(Math.round(p.x * scale), Math.round(p.y * scale), 1, 1).data; return [d[0], d[1], d[2]]; }
    function click(p) {
      var r = chart.getBoundingClientRect();
      ['mousedown', 'mouseup'].forEach(function (type) {
        chart.dispatchEvent(new w.MouseEvent(type, {clientX: r.left + p.x, clientY: r.top + p.y, bubbles: true}));
      });
    }
    state('first');
    out.legend = Array.prototype.map.call(doc.querySelectorAll('#legend span'), function (s) { return s.dataset.kind + '=' + s.textContent; });
    var crash = w.timeline.locate('caught a fatal signal');
    out.crashKind = crash.kind; out.crashPixel = pixel(crash);
    var record = w.timeline.locate('launch task 7');
    out.recordKind = record.kind; out.recordPixel = pixel(record);
    click(w.timeline.locate('caught a fatal signal'));
    out.selected = b.selected; out.detail = doc.getElementById('detail').textContent;
    key('0');
    state('all');
    for (var i = 0; i < 25; i++) key('w');
    state('zoomed');
    for (i = 0; i < 65; i++) key('w');
    state('closest');
    for (i = 0; i < 4; i++) key('a');
    out.panned = b.view;
    key('0');
    var search = doc.getElementById('search');
    search.value = 'TASK';
    search.dispatchEvent(new w.Event('input'));
    state('search');
    out.hitsText = doc.getElementById('hits').textContent;
  } catch (e) { out.error = String(e && e.stack || e); }
  document.getElementById('result').textContent = JSON.stringify(out);
};
</script></body></html>)html");
  auto dom = chromium({"--window-size=1250,800", "--dump-dom", "file://" + (tmp / "drive.html")});
  INFO(dom.err.substr(0, 2000));
  REQUIRE(dom.exit_code == 0);
  std::smatch m;
  const std::string result = std::regex_search(dom.out, m, std::regex("<pre id=\"result\">([^<]*)</pre>")) ? m[1].str() : "";
  INFO(result);
  REQUIRE(result.rfind("{\"first\":", 0) == 0);
  // Groups: this process (its events: the crash and the death; its runtime), the two emits
  // (runtime, hostile), device 3; the host's row, a row per process and one per track.
  CHECK(Has(result, "\"first\":{\"groups\":4,\"tracks\":5,\"rows\":10,"));
  CHECK(Has(result, "\"labels\":\"" + OwnComm() + " (" + std::to_string(::getpid()) + ")|atracectl ("));
  CHECK(Has(result, "|device 3\""));
  for (const char* legend : {"record=record", "crash=crash", "death=death (SIGKILL, OOM, no GOODBYE)",
                             "dump=stack dump", "exit=exit"}) {
    INFO(legend);
    CHECK(Has(result, legend));
  }
  // A crash is drawn red, a record blue: not the same mark.
  CHECK(Has(result, "\"crashKind\":\"crash\",\"crashPixel\":[213,0,0]"));
  CHECK(Has(result, "\"recordKind\":\"record\",\"recordPixel\":[51,103,214]"));
  // Clicking the crash shows its report.
  CHECK(Has(result, "\"selected\":\"crash\""));
  CHECK(Has(result, "caught a fatal signal\\nsignal: SIGSEGV"));
  // Zooming in changes the ruler's labels, down to microseconds.
  auto ticks = [&result](const std::string& name) {
    std::smatch t;
    return std::regex_search(result, t, std::regex("\"" + name + "\":\\{[^}]*\"ticks\":\"([^\"]*)\"")) ? t[1].str() : "";
  };
  INFO("all: " << ticks("all") << "\nzoomed: " << ticks("zoomed"));
  CHECK_FALSE(ticks("all").empty());
  CHECK_FALSE(ticks("zoomed").empty());
  CHECK(ticks("all") != ticks("zoomed"));
  // 0.8^90 of three days: a view of about half a millisecond, labelled in microseconds.
  INFO("closest: " << ticks("closest"));
  CHECK(std::regex_search(ticks("closest"), std::regex("^[0-9]{2}\\.[0-9]{3}\\.[0-9]{3}\\|")));
  CHECK_FALSE(std::regex_search(ticks("all"), std::regex("[0-9]{2}\\.[0-9]{3}\\.[0-9]{3}")));
  // Search: the records with "task" (case aside), counted; the tracks without one hidden.
  CHECK(Has(result, "\"search\":{\"groups\":4,\"tracks\":5,\"rows\":5,"));
  CHECK(Has(result, "\"hits\":2,"));
  CHECK(Has(result, "\"hitsText\":\"2 of 8 records match\""));
  CHECK_FALSE(Has(result, "\"error\""));
  auto shot = chromium({"--window-size=1200,500", "--screenshot=" + (tmp / "timeline.png"), "file://" + page});
  CHECK(shot.exit_code == 0);
  CHECK(ReadFile(tmp / "timeline.png").rfind("\x89PNG", 0) == 0);
}
