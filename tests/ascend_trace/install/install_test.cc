// The installed library, headers, pkg-config file and CMake package, used the way an
// application would: a strict C99 program against CANN's headers only, linked with
// -Wl,--as-needed (by pkg-config and by find_package), run against a recording daemon.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "recording_daemon.h"
#include "support/daemon_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using atraced::testing::Exists;
using atraced::testing::Run;
using atraced::testing::RunResult;
using atraced::testing::TempDir;
using ascend_trace_test::RecordingDaemon;

namespace {

// Runs a shell command line, stdout and stderr together.
RunResult Sh(const std::string& cmd) { return Run({"/bin/sh", "-c", cmd}, {.stderr_to_stdout = true}); }

// "YYYY-MM-DD hh:mm:ss.mmm.uuu ...": microseconds since midnight.
long long MicrosOfDay(const std::string& line) {
  int h = 0, m = 0, sec = 0, ms = 0, us = 0;
  if (std::sscanf(line.c_str() + 11, "%d:%d:%d.%d.%d", &h, &m, &sec, &ms, &us) != 5) return -1000000;
  return ((h * 60LL + m) * 60 + sec) * 1000000 + ms * 1000LL + us;
}

// pkg-config for the ascend_trace.pc installed under `prefix`. A relocatable .pc finds the
// prefix from its own place; the Debian build's names /usr, so it is told where it went.
std::string PkgConfig(const std::string& prefix) {
  std::string pc = "PKG_CONFIG_PATH=" + prefix + "/" + ASCEND_TRACE_LIBDIR + "/pkgconfig pkg-config ";
  if (ASCEND_TRACE_PC_NAMES_PREFIX) pc += "--define-variable=prefix=" + prefix + " ";
  return pc;
}

}  // namespace

TEST_CASE("install: a C99 program against the installed headers, linked with --as-needed") {
  TempDir tmp;
  const std::string prefix = tmp / "prefix";
  auto install = Sh(std::string(ASCEND_TRACE_CMAKE) + " --install " + ASCEND_TRACE_BUILD_DIR + " --prefix " + prefix +
                    " --component ascend_trace");
  INFO(install.out);
  REQUIRE(install.exit_code == 0);
  const std::string libdir = prefix + "/" + ASCEND_TRACE_LIBDIR;
  CHECK(Exists(prefix + "/include/ascend_trace/atrace_pub.h"));
  CHECK(Exists(prefix + "/include/ascend_trace/atrace_types.h"));
  CHECK(Exists(prefix + "/include/ascend_trace/atrace_api.h"));
  REQUIRE(Exists(libdir + "/libascend_trace.so"));
  CHECK(Exists(libdir + "/cmake/AscendTrace/AscendTraceConfig.cmake"));
  // SONAME libascend_trace.so.0 (Debian's libascend-trace0); CANN's programs need the file
  // name libascend_trace.so, which the install has too. Only the API is exported.
  CHECK(Sh("readelf -d " + libdir + "/libascend_trace.so").out.find("[libascend_trace.so.0]") != std::string::npos);
  CHECK(Exists(libdir + "/libascend_trace.so.0"));
  const auto exported = Sh("nm -D --defined-only " + libdir + "/libascend_trace.so | awk '{print $3}' | grep -v '^Atrace'");
  CHECK(exported.out.empty());

  RecordingDaemon d(tmp / "d.sock");
  const std::string run_env = "LD_LIBRARY_PATH=" + libdir + " ATRACED_SOCKET=" + d.path() + " ";
  const std::string cc = std::string(ASCEND_TRACE_C_COMPILER) + " -std=c99 -pedantic -Wall -Wextra -Werror " +
                         ASCEND_TRACE_CONSUMER_FLAGS + " ";
  const std::string pc = PkgConfig(prefix);

  SECTION("pkg-config") {
    auto build = Sh(cc + "$(" + pc + "--cflags ascend_trace) " + ASCEND_TRACE_EXAMPLE + " -o " + (tmp / "app") +
                    " -Wl,--as-needed $(" + pc + "--libs ascend_trace)");
    INFO(build.out);
    REQUIRE(build.exit_code == 0);
    CHECK(Sh("readelf -d " + (tmp / "app")).out.find("libascend_trace.so") != std::string::npos);
    auto run = Sh(run_env + (tmp / "app"));
    INFO(run.out);
    CHECK(run.exit_code == 0);
    REQUIRE(d.WaitFor(ATR_OP_RING_REPORT, 1));
    CHECK(d.Reports().at(0).wait);
  }
  SECTION("the plain link line loses the library under --as-needed (why the .pc brackets it)") {
    auto build = Sh(cc + "-I" + prefix + "/include/ascend_trace " + ASCEND_TRACE_EXAMPLE + " -o " + (tmp / "bare") +
                    " -Wl,--as-needed -L" + libdir + " -lascend_trace");
    INFO(build.out);
    REQUIRE(build.exit_code == 0);
    CHECK(Sh("readelf -d " + (tmp / "bare")).out.find("libascend_trace.so") == std::string::npos);
    CHECK(Sh(run_env + (tmp / "bare")).exit_code == 3);  // the weak symbols are NULL
  }
  SECTION("CANN's include form, \"trace/atrace_pub.h\", through pkg-config and find_package") {
    CHECK(Exists(prefix + "/include/ascend_trace/trace/atrace_pub.h"));
    CHECK(Exists(prefix + "/include/ascend_trace/trace/atrace_types.h"));
    auto build = Sh(cc + "$(" + pc + "--cflags ascend_trace) " + ASCEND_TRACE_TRACE_INCLUDE_EXAMPLE + " -o " +
                    (tmp / "ge") + " -Wl,--as-needed $(" + pc + "--libs ascend_trace)");
    INFO(build.out);
    REQUIRE(build.exit_code == 0);
    auto run = Sh(run_env + (tmp / "ge"));
    INFO(run.out);
    CHECK(run.exit_code == 0);
    const std::string build_dir = tmp / "ge_consumer";
    auto configure = Sh(std::string(ASCEND_TRACE_CMAKE) + " -S " + ASCEND_TRACE_CONSUMER_DIR + " -B " + build_dir +
                        " -DCMAKE_PREFIX_PATH=" + prefix + " -DEXAMPLE_SOURCE=" + ASCEND_TRACE_TRACE_INCLUDE_EXAMPLE +
                        " -DCMAKE_C_COMPILER=" + ASCEND_TRACE_C_COMPILER + " '-DCMAKE_C_FLAGS=" +
                        ASCEND_TRACE_CONSUMER_FLAGS + "'");
    INFO(configure.out);
    REQUIRE(configure.exit_code == 0);
    auto cmake_build = Sh(std::string(ASCEND_TRACE_CMAKE) + " --build " + build_dir);
    INFO(cmake_build.out);
    REQUIRE(cmake_build.exit_code == 0);
    CHECK(Sh(run_env + build_dir + "/dropin_example").exit_code == 0);
    // Both forms name one header: including both in one unit is fine.
    const std::string both = tmp / "both.c";
    REQUIRE(Sh("printf '#include \"atrace_pub.h\"\\n#include \"trace/atrace_pub.h\"\\n#include "
               "\"trace/atrace_types.h\"\\nint main(void) { return TRACER_TYPE_SCHEDULE; }\\n' > " + both).exit_code == 0);
    auto twice = Sh(cc + "$(" + pc + "--cflags ascend_trace) " + both + " -o " + (tmp / "both") + " $(" + pc +
                    "--libs ascend_trace)");
    INFO(twice.out);
    CHECK(twice.exit_code == 0);
  }
  SECTION("find_package") {
    const std::string build_dir = tmp / "consumer";
    auto configure = Sh(std::string(ASCEND_TRACE_CMAKE) + " -S " + ASCEND_TRACE_CONSUMER_DIR + " -B " + build_dir +
                        " -DCMAKE_PREFIX_PATH=" + prefix + " -DEXAMPLE_SOURCE=" + ASCEND_TRACE_EXAMPLE +
                        " -DCMAKE_C_COMPILER=" + ASCEND_TRACE_C_COMPILER + " '-DCMAKE_C_FLAGS=" +
                        ASCEND_TRACE_CONSUMER_FLAGS + "'");
    INFO(configure.out);
    REQUIRE(configure.exit_code == 0);
    auto build = Sh(std::string(ASCEND_TRACE_CMAKE) + " --build " + build_dir);
    INFO(build.out);
    REQUIRE(build.exit_code == 0);
    CHECK(Sh("readelf -d " + build_dir + "/dropin_example").out.find("libascend_trace.so") != std::string::npos);
    auto run = Sh(run_env + build_dir + "/dropin_example");
    INFO(run.out);
    CHECK(run.exit_code == 0);
    REQUIRE(d.WaitFor(ATR_OP_RING_REPORT, 1));
  }
}

TEST_CASE("install: the C program against the real daemon writes CANN's layout, and its exitSave object at exit") {
  TempDir tmp;
  const std::string prefix = tmp / "prefix";
  REQUIRE(Sh(std::string(ASCEND_TRACE_CMAKE) + " --install " + ASCEND_TRACE_BUILD_DIR + " --prefix " + prefix +
             " --component ascend_trace").exit_code == 0);
  const std::string libdir = prefix + "/" + ASCEND_TRACE_LIBDIR;
  const std::string pc = PkgConfig(prefix);
  auto build = Sh(std::string(ASCEND_TRACE_C_COMPILER) + " -std=c99 " + ASCEND_TRACE_CONSUMER_FLAGS + " $(" + pc +
                  "--cflags ascend_trace) " + ASCEND_TRACE_EXAMPLE + " -o " + (tmp / "app") + " $(" + pc +
                  "--libs ascend_trace)");
  INFO(build.out);
  REQUIRE(build.exit_code == 0);
  atraced::testing::DaemonProcess d;
  REQUIRE(d.Start());
  auto run = Sh("LD_LIBRARY_PATH=" + libdir + " ATRACED_SOCKET=" + d.socket() + " " + (tmp / "app"));
  INFO(run.out);
  REQUIRE(run.exit_code == 0);
  // The report: a schedule dir with the object's .txt, three lines in CANN's format.
  // At exit: an exit dir with the same object, destroyed before exit but marked exitSave.
  std::string schedule_file, exit_file;
  for (const auto& proc : atraced::testing::ListNames(d.trace_dir())) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : atraced::testing::ListNames(d.trace_dir() + "/" + proc)) {
      const std::string file = d.trace_dir() + "/" + proc + "/" + ev + "/schedule_tracer_c_app.txt";
      if (ev.rfind("schedule_event_", 0) == 0) schedule_file = file;
      if (ev.rfind("exit_event_", 0) == 0) exit_file = file;
    }
  }
  REQUIRE(Exists(schedule_file));
  REQUIRE(Exists(exit_file));
  const std::string text = atraced::testing::ReadFile(schedule_file);
  INFO(text);
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);  // three records and where each sits in the ring
  CHECK(text.find("\natraced: ring ") != std::string::npos);
  CHECK(text.find(" CqReport:devId=0,stmId=2\n") != std::string::npos);
  CHECK(text.substr(4, 1) == "-");   // YYYY-MM-DD hh:mm:ss.mmm.uuu
  CHECK(text.substr(23, 1) == ".");
  // Nothing was submitted after the report: the exit save has the same records. Their times
  // agree to a few microseconds, not always to the digit: with counter stamps each save
  // measures the counter's rate again (docs/TIMESTAMPS.md).
  const std::string exit_text = atraced::testing::ReadFile(exit_file);
  INFO(exit_text);
  REQUIRE(exit_text.size() == text.size());
  for (size_t line = 0; line < text.size(); line = text.find('\n', line) + 1) {
    const std::string a = text.substr(line, text.find('\n', line) - line);
    const std::string b = exit_text.substr(line, exit_text.find('\n', line) - line);
    CHECK(a.substr(27) == b.substr(27));  // the record after "YYYY-MM-DD hh:mm:ss.mmm.uuu"
    CHECK(std::llabs(MicrosOfDay(a) - MicrosOfDay(b)) <= 20);
  }
}
