// atracectl vacuum's journalctl verbs against a real daemon (issue 26): --older-than,
// --max-use and --keep, each with and without --dry-run, what each may remove (exit dirs),
// input refused before anything is sent, and a user who may only ask for a dry run.
#include <catch2/catch.hpp>

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <regex>
#include <sstream>

#include "support/daemon_process.h"
#include "support/subprocess.h"

using namespace atraced::testing;

namespace {

RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args, const std::string& input = "") {
  args.insert(args.begin(), {ATRACECTL_BINARY, "--socket", d.socket()});
  return Run(args, {.input = input});
}

bool Has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// Emits one event and returns its directory relative to the trace directory.
std::string Emit(const DaemonProcess& d, const std::string& kind, const std::string& object,
                 std::optional<int> device = std::nullopt) {
  std::vector<std::string> args{"emit", "--event", kind, "--object", object};
  if (device) args.insert(args.end(), {"--device", std::to_string(*device)});
  auto r = Ctl(d, args, "x\n");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::string file = r.out.substr(0, r.out.find('\n'));
  std::string dir = file.substr(0, file.rfind('/'));
  REQUIRE(dir.rfind(d.trace_dir() + "/", 0) == 0);
  return dir.substr(d.trace_dir().size() + 1);
}

// The directories `list --json` names, in its order.
std::vector<std::string> Listed(const DaemonProcess& d) {
  auto r = Ctl(d, {"list", "--json"});
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> paths;
  std::regex path("\"path\":\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), path); it != std::sregex_iterator(); ++it) {
    paths.push_back((*it)[1]);
  }
  return paths;
}

// What `vacuum` prints for these directories.
std::string Report(bool dry_run, const std::vector<std::string>& dirs, uint64_t bytes_each) {
  std::string out = std::string(dry_run ? "would remove " : "removed ") + std::to_string(dirs.size()) +
                    (dirs.size() == 1 ? " directory" : " directories");
  const uint64_t bytes = bytes_each * dirs.size();
  out += " (" + (bytes == 0 ? std::string("0 B") : std::to_string(bytes / 1024) + ".0 KiB") + ")";
  out += dirs.empty() ? "\n" : ":\n";
  for (const auto& dir : dirs) out += "  " + dir + "\n";
  return out;
}

bool OnDisk(const DaemonProcess& d, const std::string& dir) {
  struct stat st {};
  return ::stat((d.trace_dir() + "/" + dir).c_str(), &st) == 0;
}

// Moves every creation time in a stopped daemon's order log `by` into the past; returns how
// many records it changed.
int BackdateOrderLog(const std::string& path, std::chrono::microseconds by) {
  std::istringstream in(ReadFile(path));
  std::string out;
  int changed = 0;
  for (std::string line; std::getline(in, line);) {
    // "+ <seq> <class> <device> <uid> <created_us> <dir>"
    std::istringstream fields(line);
    std::string plus, seq, cls, device, uid, dir;
    int64_t created_us = 0;
    if (line.rfind("+ ", 0) == 0 && fields >> plus >> seq >> cls >> device >> uid >> created_us >> dir) {
      line = "+ " + seq + " " + cls + " " + device + " " + uid + " " + std::to_string(created_us - by.count()) + " " + dir;
      ++changed;
    }
    out += line + "\n";
  }
  WriteFile(path, out);
  return changed;
}

}  // namespace

TEST_CASE("atracectl vacuum --keep N keeps the N newest host and device dirs each, never an exit dir",
          "[atracectl][vacuum]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  const uint64_t B = BlockSize(d.trace_dir());
  const std::string h1 = Emit(d, "schedule", "h1"), h2 = Emit(d, "stackcore", "h2"), h3 = Emit(d, "schedule", "h3");
  const std::string d1 = Emit(d, "schedule", "d1", 1), d2 = Emit(d, "schedule", "d2", 1);
  const std::string e1 = Emit(d, "exit", "e1"), e2 = Emit(d, "exit", "e2");
  const std::vector<std::string> all{h1, h2, h3, d1, d2, e1, e2};
  REQUIRE(Listed(d) == all);

  auto dry = Ctl(d, {"vacuum", "--keep", "1", "--dry-run"});
  INFO(dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK(dry.out == Report(true, {h1, h2, d1}, B));
  CHECK(Listed(d) == all);  // nothing removed
  for (const auto& dir : all) CHECK(OnDisk(d, dir));

  auto vac = Ctl(d, {"vacuum", "--keep", "1"});
  REQUIRE(vac.exit_code == 0);
  CHECK(vac.out == Report(false, {h1, h2, d1}, B));
  CHECK(Listed(d) == std::vector<std::string>{h3, d2, e1, e2});  // both exit dirs stay
  for (const auto& gone : {h1, h2, d1}) CHECK(EventuallyGone(d.trace_dir() + "/" + gone));
  auto status = Ctl(d, {"status", "--json"});
  CHECK(Has(status.out, "\"vacuum\":3}"));  // counted as aged by vacuum
  CHECK(Has(status.out, "\"host\":{\"dirs\":1,"));

  auto again = Ctl(d, {"vacuum", "--keep", "1", "--json"});
  CHECK(again.out == "{\"dry_run\":false,\"removed\":[],\"omitted\":0,\"bytes\":0}\n");
}

TEST_CASE("atracectl vacuum --older-than removes every class older than the span, exit dirs included",
          "[atracectl][vacuum]") {
  // The old dirs are made two hours old in the daemon's own record of them, between two runs
  // on one root, so what is old and what is fresh does not depend on how fast commands run.
  TempDir tmp;
  const std::string root = tmp / "root";
  std::string old_exit, old_host, old_device;
  {
    DaemonProcess first({{}, {}, true, 10, std::nullopt, root});
    REQUIRE(first.Start());
    old_exit = Emit(first, "exit", "e");
    old_host = Emit(first, "schedule", "h");
    old_device = Emit(first, "schedule", "dv", 2);
    REQUIRE(first.Stop() == 0);
  }
  REQUIRE(BackdateOrderLog(root + "/atrace/.atraced_order", std::chrono::hours(2)) == 3);
  DaemonProcess d({{}, {}, true, 10, std::nullopt, root});
  REQUIRE(d.Start());
  const uint64_t B = BlockSize(d.trace_dir());
  const std::string fresh = Emit(d, "schedule", "fresh");

  auto dry = Ctl(d, {"vacuum", "--older-than", "1h", "--dry-run"});
  INFO(dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK(dry.out == Report(true, {old_exit, old_host, old_device}, B));
  CHECK(Listed(d).size() == 4);

  auto none = Ctl(d, {"vacuum", "--older-than", "2h 30min"});
  REQUIRE(none.exit_code == 0);
  CHECK(none.out == "removed 0 directories (0 B)\n");

  auto vac = Ctl(d, {"vacuum", "--older-than", "1h", "--json"});
  REQUIRE(vac.exit_code == 0);
  CHECK(vac.out == "{\"dry_run\":false,\"removed\":[\"" + old_exit + "\",\"" + old_host + "\",\"" + old_device +
                       "\"],\"omitted\":0,\"bytes\":" + std::to_string(3 * B) + "}\n");
  CHECK(Listed(d) == std::vector<std::string>{fresh});
  CHECK(EventuallyGone(d.trace_dir() + "/" + old_exit));
}

TEST_CASE("atracectl vacuum --max-use ages the oldest host and device dirs first, exit dirs last",
          "[atracectl][vacuum]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  const uint64_t B = BlockSize(d.trace_dir());
  const std::string e1 = Emit(d, "exit", "e1"), h1 = Emit(d, "schedule", "h1"), d1 = Emit(d, "schedule", "d1", 3),
                    h2 = Emit(d, "schedule", "h2");
  const std::vector<std::string> all{e1, h1, d1, h2};

  // Down to two blocks: the two oldest that are not exit dirs, though the exit dir is older.
  auto dry = Ctl(d, {"vacuum", "--max-use", std::to_string(2 * B), "--dry-run"});
  INFO(dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK(dry.out == Report(true, {h1, d1}, B));
  // Down to nothing: the exit dir too, last. With --keep as well, each directory once.
  auto everything = Ctl(d, {"vacuum", "--max-use", "0", "--keep", "1", "--dry-run"});
  CHECK(everything.out == Report(true, all, B));
  auto within = Ctl(d, {"vacuum", "--max-use", "2G", "--dry-run"});
  CHECK(within.out == "would remove 0 directories (0 B)\n");
  CHECK(Listed(d) == all);

  auto vac = Ctl(d, {"vacuum", "--max-use", std::to_string(2 * B + B / 2)});
  REQUIRE(vac.exit_code == 0);
  CHECK(vac.out == Report(false, {h1, d1}, B));
  CHECK(Listed(d) == std::vector<std::string>{e1, h2});
  auto du = Ctl(d, {"du", "--json"});
  CHECK(Has(du.out, "\"total\":" + std::to_string(2 * B) + ","));
}

TEST_CASE("atracectl vacuum refuses a bad span, size or count before it asks the daemon", "[atracectl][vacuum][usage]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  const std::string dir = Emit(d, "schedule", "kept");
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const Bad bad = GENERATE(
      Bad{{"--older-than", "5"}, "--older-than '5' is not a span: use a number and a unit, as '2h'"},
      Bad{{"--older-than", "1.5h"}, "--older-than '1.5h' is not a span"},
      Bad{{"--older-than", "-1h"}, "--older-than '-1h' is not a span"},
      Bad{{"--older-than", "3fortnights"}, "is not a span"},
      Bad{{"--older-than", "0s"}, "--older-than '0s' is no time at all"},
      Bad{{"--max-use", "5Q"}, "--max-use '5Q' is not a size: use bytes or K, M, G, T"},
      Bad{{"--max-use", "-1"}, "--max-use '-1' is not a size"},
      Bad{{"--max-use", "1.5G"}, "--max-use '1.5G' is not a size"},
      Bad{{"--max-use", "99999999999999999999G"}, "is not a size"},
      Bad{{"--keep", "0"}, "--keep '0' is not a number of directories: give a whole number, 1 or more"},
      Bad{{"--keep", "-3"}, "--keep '-3' is not a number of directories"},
      Bad{{"--keep", "2K"}, "--keep '2K' is not a number of directories"},
      Bad{{"--keep", "5000000000"}, "--keep '5000000000' is not a number of directories"});
  std::vector<std::string> args{"vacuum"};
  args.insert(args.end(), bad.args.begin(), bad.args.end());
  auto r = Ctl(d, args);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(Has(r.err, bad.says));
  CHECK(r.out.empty());
  CHECK(Listed(d) == std::vector<std::string>{dir});
}

TEST_CASE("atracectl vacuum: a user who is not root may ask for a dry run and the configured limits, not the verbs",
          "[atracectl][vacuum][security]") {
  const bool nobody_runs_it =
      ::geteuid() == 0 &&
      Run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/test", "-x", ATRACECTL_BINARY})
              .exit_code == 0;
  if (!nobody_runs_it) {
    WARN("skipped: needs root, setpriv and a build tree uid 65534 may run");
    return;
  }
  const struct group* g = ::getgrgid(65534);
  REQUIRE(g != nullptr);
  DaemonProcess d({{"--socket-group", g->gr_name}, {}, true, 10});
  REQUIRE(d.Start());
  REQUIRE(::chmod(d.tmp().path().c_str(), 0755) == 0);  // the socket's directory, for uid 65534
  const std::string h1 = Emit(d, "schedule", "h1"), h2 = Emit(d, "schedule", "h2");
  auto as_nobody = [&](std::vector<std::string> args) {
    std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                  ATRACECTL_BINARY,   "--socket",       d.socket()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  };
  for (const auto& verb : std::vector<std::vector<std::string>>{
           {"--keep", "1"}, {"--older-than", "1us"}, {"--max-use", "0"}}) {
    std::vector<std::string> args{"vacuum"};
    args.insert(args.end(), verb.begin(), verb.end());
    auto refused = as_nobody(args);
    INFO(verb[0]);
    CHECK(refused.exit_code == 1);
    CHECK(Has(refused.err, "atracectl: vacuum: "));
    CHECK(Has(refused.err, "(daemon: vacuum: only root or the daemon's user may remove beyond the configured limits"));
    CHECK(refused.out.empty());
  }
  CHECK(Listed(d) == std::vector<std::string>{h1, h2});  // nothing removed
  // Logged once for the three: a flood of refusals from one uid is one line per interval.
  CHECK(d.WaitForLog("refused VACUUM_BY from pid "));
  CHECK(d.LogHas(" uid 65534: EPERM vacuum: only root or the daemon's user may remove"));

  auto dry = as_nobody({"vacuum", "--keep", "1", "--dry-run"});
  INFO(dry.err);
  CHECK(dry.exit_code == 0);
  CHECK(Has(dry.out, "would remove 1 directory ("));
  auto limits = as_nobody({"vacuum"});  // the configured limits bind everyone alike: allowed
  CHECK(limits.exit_code == 0);
  CHECK(limits.out == "removed 0 directories\n");
  CHECK(Listed(d) == std::vector<std::string>{h1, h2});
}
