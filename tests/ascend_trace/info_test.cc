// atracectl info PID against what real drop-in processes left: a crash (signal, code, fault
// address, top frames) and a SIGKILL (how it ended, the OOM line), and the errors.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "crash_util.h"

using namespace crash_test;

namespace {

struct Ran {
  int code = -1;
  std::string out;
};

Ran Ctl(const DaemonProcess& d, const std::string& args) {
  Ran r;
  const std::string cmd = std::string(ATRACECTL_BINARY) + " --socket " + d.socket() + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return r;
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
  const auto info = Ctl(d, "info " + std::to_string(child.pid));
  INFO(info.out);
  REQUIRE(info.code == 0);
  CHECK(Has(info.out, "           PID: " + std::to_string(child.pid) + "\n"));
  CHECK(Has(info.out, "  Command line: " + std::string(ASCEND_TRACE_CRASH_CHILD) + " segv 3  (as a report says)\n"));
  CHECK(Has(info.out, "        Events: 1 (stackcore 1), "));
  CHECK(Has(info.out, "        Signal: 11 (SIGSEGV)\n"));
  CHECK(Has(info.out, "          Code: 1 (SEGV_MAPERR)\n"));
  CHECK(Has(info.out, " Fault address: 0x0000000000000000\n"));
  CHECK(Has(info.out, "    Top frames:\n      #0 0x"));
  CHECK(Has(info.out, " crash_here+0x"));
  const auto json = Ctl(d, "info " + std::to_string(child.pid) + " --json");
  CHECK(json.code == 0);
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
  const auto info = Ctl(d, "info " + std::to_string(child.pid));
  INFO(info.out);
  REQUIRE(info.code == 0);
  CHECK(Has(info.out, "           How: "));
  CHECK(Has(info.out, "SIGKILL"));
  CHECK(Has(info.out, "           Oom: "));
  const auto none = Ctl(d, "info 999999999");
  CHECK(none.code == 1);
  CHECK(Has(none.out, "no event directory of pid 999999999"));
  const auto bad = Ctl(d, "info nine");
  CHECK(bad.code == 2);
  CHECK(Has(bad.out, "'nine' is not a process id"));
}
