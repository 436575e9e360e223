// The drop-in where CANN's components rely on CANN's exact behaviour, against the real
// daemon and library (issue 25): HCCL's same-named exitSave communicators at exit, and the
// directory names in the process's own time zone.
#include <catch2/catch.hpp>

#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/subprocess.h"

using atraced::testing::DaemonProcess;
using atraced::testing::ListNames;
using atraced::testing::ReadFile;
using atraced::testing::Run;
using atraced::testing::RunResult;

namespace {

// Runs `program` against `d` with `env` and nothing else in its environment; returns its
// exit code.
int RunChild(const DaemonProcess& d, const char* program, std::map<std::string, std::string> env) {
  env["ATRACED_SOCKET"] = d.socket();
  const RunResult r = Run({program}, {.env = env, .inherit_env = false});
  INFO(r.err);
  return r.exit_code;
}

// <trace>/<process dir>/<exit dir> paths.
std::vector<std::string> ExitDirs(const DaemonProcess& d) {
  std::vector<std::string> out;
  for (const auto& proc : ListNames(d.trace_dir())) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : ListNames(d.trace_dir() + "/" + proc)) {
      if (ev.rfind("exit_event_", 0) == 0) out.push_back(d.trace_dir() + "/" + proc + "/" + ev);
    }
  }
  return out;
}

// Seconds between a 20-digit trace time read as UTC and now.
long long SecondsFromNowUtc(const std::string& t20) {
  std::tm tm{};
  REQUIRE(::strptime(t20.substr(0, 14).c_str(), "%Y%m%d%H%M%S", &tm) != nullptr);
  return static_cast<long long>(::timegm(&tm)) - static_cast<long long>(::time(nullptr));
}

}  // namespace

TEST_CASE("cann parity: two HCCL communicators of one name, the sub-group destroyed: the exit dir has the live one",
          "[cann][exit]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  REQUIRE(RunChild(d, ASCEND_TRACE_HCCL_CHILD, {}) == 0);
  const auto dirs = ExitDirs(d);
  REQUIRE(dirs.size() == 1);
  const auto files = ListNames(dirs[0]);
  REQUIRE(files.size() == 1);
  const std::string text = ReadFile(dirs[0] + "/" + files[0]);
  INFO(text);
  CHECK(text.find(" world\n") != std::string::npos);
  CHECK(text.find(" world again\n") != std::string::npos);
  CHECK(text.find("sub-group") == std::string::npos);
}

TEST_CASE("cann parity: a process 8 hours east of the daemon names its directories in its own time",
          "[cann][time]") {
  DaemonProcess d;  // in this test's own zone
  REQUIRE(d.Start());
  // A POSIX zone string (UTC+8, no DST), so that no tzdata is needed.
  REQUIRE(RunChild(d, ASCEND_TRACE_HCCL_CHILD, {{"TZ", "CST-8"}}) == 0);
  const auto dirs = ExitDirs(d);
  REQUIRE(dirs.size() == 1);
  const std::string event = dirs[0].substr(dirs[0].rfind('/') + 1);
  const std::string proc_path = dirs[0].substr(0, dirs[0].rfind('/'));
  const std::string proc = proc_path.substr(proc_path.rfind('/') + 1);
  INFO(proc << "/" << event);
  // Both names end in the 20-digit time: read as UTC they are 8 hours ahead of now.
  const long long event_ahead = SecondsFromNowUtc(event.substr(event.size() - 20));
  const long long proc_ahead = SecondsFromNowUtc(proc.substr(proc.size() - 20));
  const time_t now = ::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  const long long daemon_offset = local.tm_gmtoff;  // what the names would say without the fix
  CHECK(std::llabs(event_ahead - 8 * 3600) <= 60);
  CHECK(std::llabs(proc_ahead - 8 * 3600) <= 60);
  if (daemon_offset == 8 * 3600) WARN("the daemon's own zone is UTC+8: this test cannot tell the two apart");
}
