// The crash report's stack lines in CANN's form (atraced/crash/stack_format.h, written by
// atraced/proto/stack_report.h), without a process: module bases from maps text, the
// faulting frame under a signal handler, the lines.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "atraced/crash/stack_format.h"
#include "support/asys_stackcore.h"

using atraced::crash::FaultingFrame;
using atraced::crash::ModuleBases;
using atraced::crash::StackFrame;
using atraced::proto::ThreadLine;

namespace {
std::string FrameLine(uint32_t number, const StackFrame& frame, const std::map<std::string, uint64_t>& bases) {
  return atraced::proto::FrameLine(atraced::crash::FrameText(number, frame, bases));
}
}  // namespace

namespace {

const char* const kMaps =
    "55b6b13fe000-55b6b13ff000 r--p 00000000 fe:00 5309970                    /opt/app/bin/app\n"
    "55b6b13ff000-55b6b1400000 r-xp 00001000 fe:00 5309970                    /opt/app/bin/app\n"
    "55b6e4ce6000-55b6e4d07000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f9e35e20000-7f9e35e45000 rw-s 00000000 00:01 3636                       /memfd:atrace:obj (deleted)\n"
    "7f9e37a54000-7f9e37a7a000 r--p 00000000 fe:00 333207                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f9e37a7a000-7f9e37bcf000 r-xp 00026000 fe:00 333207                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f9e38000000-7f9e38001000 r--p 00000000 fe:00 9                          /opt/app/lib/lib with space.so\n"
    "7ffd0c5f1000-7ffd0c5f3000 r-xp 00000000 00:00 0                          [vdso]\n"
    "garbage line\n"
    "7f9e37a00000-7f9e37a01000 r--p 00000000 fe:00 333207                     /usr/lib/x86_64-linux-gnu/libc.so.6\n";

StackFrame Frame(uint64_t pc, bool activation, std::string module = "", std::string symbol = "") {
  StackFrame f;
  f.pc = pc;
  f.activation = activation;
  f.module = std::move(module);
  f.symbol = std::move(symbol);
  return f;
}

}  // namespace

TEST_CASE("stack format: a module's base is its lowest mapping at file offset 0", "[crash][stack]") {
  const auto bases = ModuleBases(kMaps);
  CHECK(bases.at("/opt/app/bin/app") == 0x55b6b13fe000);
  CHECK(bases.at("/usr/lib/x86_64-linux-gnu/libc.so.6") == 0x7f9e37a00000);  // the lower of two at offset 0
  CHECK(bases.at("/opt/app/lib/lib with space.so") == 0x7f9e38000000);
  CHECK(bases.at("/memfd:atrace:obj (deleted)") == 0x7f9e35e20000);
  CHECK(bases.count("[heap]") == 0);
  CHECK(bases.count("[vdso]") == 0);
  CHECK(ModuleBases("").empty());
  CHECK(ModuleBases("zzzz-1 r--p 00000000 fe:00 1 /x\n").empty());  // not a hex range
}

TEST_CASE("stack format: the faulting frame is the one after the signal trampoline", "[crash][stack]") {
  // What libdwfl gave for a NULL store caught by the library's handler: __poll (exact pc),
  // four handler frames (return addresses), the trampoline and the faulting frame (exact).
  std::vector<StackFrame> handler{Frame(1, true),  Frame(2, false), Frame(3, false), Frame(4, false),
                                  Frame(5, false), Frame(6, true),  Frame(7, true),  Frame(8, false)};
  CHECK(FaultingFrame(handler) == 6);
  // A process not in a handler (pause at the top): nothing skipped.
  CHECK(FaultingFrame({Frame(1, true), Frame(2, false), Frame(3, false)}) == 0);
  CHECK(FaultingFrame({}) == 0);
  CHECK(FaultingFrame({Frame(1, true)}) == 0);
  // A trampoline whose next frame could not be unwound: the trampoline is the last known.
  CHECK(FaultingFrame({Frame(1, true), Frame(2, false), Frame(3, true)}) == 2);
}

TEST_CASE("stack format: frame lines carry asys's four tokens, then symbol and source", "[crash][stack]") {
  const auto bases = ModuleBases(kMaps);
  StackFrame f = Frame(0x55b6b13ff870, true, "/opt/app/bin/app", "crash_here+0x10");
  f.source = "crash_child.c:44";
  CHECK(FrameLine(0, f, bases) ==
        "#0 0x000055b6b13ff870 0x000055b6b13fe000 /opt/app/bin/app crash_here+0x10 at crash_child.c:44\n");
  CHECK(FrameLine(12, Frame(0x7f9e37a7b24a, false, "/usr/lib/x86_64-linux-gnu/libc.so.6"), bases) ==
        "#12 0x00007f9e37a7b24a 0x00007f9e37a00000 /usr/lib/x86_64-linux-gnu/libc.so.6\n");
  // No module: "??" keeps the four tokens; base 0 tells asys there is nothing to resolve.
  CHECK(FrameLine(3, Frame(0xdead, false), bases) == "#3 0x000000000000dead 0x0000000000000000 ??\n");
  // A module's space is escaped: its base is still found, and the module stays one token.
  CHECK(FrameLine(4, Frame(0x7f9e38000010, false, "/opt/app/lib/lib with space.so"), bases) ==
        "#4 0x00007f9e38000010 0x00007f9e38000000 /opt/app/lib/lib\\x20with\\x20space.so\n");
  CHECK(ThreadLine(2, 4711, "worker") == "Thread 2 (4711, worker)\n");
}

TEST_CASE("stack format: a report built of these lines passes asys's rules", "[crash][stack]") {
  const auto bases = ModuleBases(kMaps);
  const std::string report =
      "atraced: process 1 (app) caught a fatal signal\n\n[process]\ncrash reason:11\n\n[stack]\n" +
      ThreadLine(1, 1, "app") +
      FrameLine(0, Frame(0x55b6b13ff870, true, "/opt/app/bin/app", "crash_here+0x10"), bases) +
      FrameLine(1, Frame(0x7f9e37a7b24a, false, "/usr/lib/x86_64-linux-gnu/libc.so.6"), bases) +
      FrameLine(2, Frame(0xdead, false), bases) + "\n\n[maps]\n" + kMaps + "\n[threads]\n1 app\n";
  const auto asys = atraced::testing::ParseAsAsys(report);
  REQUIRE(asys.frames.size() == 3);
  CHECK(asys.frames[0].module == "/opt/app/bin/app");
  CHECK(asys.frames[1].module == "/usr/lib/x86_64-linux-gnu/libc.so.6");
  // The frame with no module is read but resolves to nothing, as asys leaves it.
  REQUIRE(asys.problems.size() == 1);
  CHECK(asys.problems[0].find("base names no [maps] line") == 0);
}
