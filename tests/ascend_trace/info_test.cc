// atracectl info PID against what real drop-in processes left: a crash (signal, code, fault
// address, top frames) and a SIGKILL (how it ended, the OOM line), and the errors.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "crash_util.h"
#include "support/subprocess.h"

using namespace crash_test;
using atraced::testing::Run;
using atraced::testing::RunResult;

namespace {

// atracectl against `d`, stdout and stderr together.
RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args) {
  args.insert(args.begin(), {ATRACECTL_BINARY, "--socket", d.socket()});
  return Run(args, {.stderr_to_stdout = true});
}

bool Has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("atracectl info: a crash's signal, code, fault address and top frames, and its command line",
          "[crash][info]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "segv", 3);
  RequireDiedOf(child, SIGSEGV);
  REQUIRE(AwaitStackcore(d, child.pid).size() == 1);
  const auto info = Ctl(d, {"info", std::to_string(child.pid)});
  INFO(info.out);
  REQUIRE(info.exit_code == 0);
  CHECK(Has(info.out, "           PID: " + std::to_string(child.pid) + "\n"));
  CHECK(Has(info.out, "  Command line: " + std::string(ASCEND_TRACE_CRASH_CHILD) + " segv 3  (as a report says)\n"));
  CHECK(Has(info.out, "        Events: 1 (stackcore 1), "));
  CHECK(Has(info.out, "        Signal: 11 (SIGSEGV)\n"));
  CHECK(Has(info.out, "          Code: 1 (SEGV_MAPERR)\n"));
  CHECK(Has(info.out, " Fault address: 0x0000000000000000\n"));
  CHECK(Has(info.out, "    Top frames:\n      #0 0x"));
  CHECK(Has(info.out, " crash_here+0x"));
  const auto json = Ctl(d, {"info", std::to_string(child.pid), "--json"});
  CHECK(json.exit_code == 0);
  CHECK(Has(json.out, "\"signal\":\"11 (SIGSEGV)\""));
  CHECK(Has(json.out, "\"top_frames\":[\"#0 0x"));
}

TEST_CASE("atracectl info: a SIGKILLed process says how it ended, and an unknown pid says so", "[crash][info]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "wait", 2);
  REQUIRE(::kill(child.pid, SIGKILL) == 0);
  RequireDiedOf(child, SIGKILL);
  REQUIRE(AwaitStackcore(d, child.pid).size() == 1);
  const auto info = Ctl(d, {"info", std::to_string(child.pid)});
  INFO(info.out);
  REQUIRE(info.exit_code == 0);
  CHECK(Has(info.out, "           How: "));
  CHECK(Has(info.out, "SIGKILL"));
  CHECK(Has(info.out, "           Oom: "));
  const auto none = Ctl(d, {"info", "999999999"});
  CHECK(none.exit_code == 1);
  CHECK(Has(none.out, "no event directory of pid 999999999"));
  const auto bad = Ctl(d, {"info", "nine"});
  CHECK(bad.exit_code == 2);
  CHECK(Has(bad.out, "'nine' is not a process id"));
}
