// The library as others see it: the exported symbols, a C99 program, and the installed
// package consumed through pkg-config and find_package.
#include <catch2/catch.hpp>

#include <sstream>

#include "support/daemon_process.h"
#include "support/subprocess.h"

using namespace atraced::testing;

namespace {

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

RunResult Shell(const std::string& script, const std::map<std::string, std::string>& env = {}) {
  return Run({"/bin/sh", "-c", script}, {.env = env});
}

}  // namespace

TEST_CASE("only the C API's atrace_* functions are exported", "[client][abi]") {
  auto r = Run({"/usr/bin/nm", "-D", "--defined-only", ATRACE_CLIENT_LIBRARY});
  REQUIRE(r.exit_code == 0);
  int exported = 0;
  for (const auto& line : Lines(r.out)) {
    std::string name = line.substr(line.rfind(' ') + 1);
    if (name == "ATRACE_CLIENT_0") continue;  // the version node of the version script
    INFO(line);
    CHECK(name.rfind("atrace_", 0) == 0);
    ++exported;
  }
  CHECK(exported == 28);  // every function of atrace_client.h, nothing else
}

TEST_CASE("a C99 program links the library and emits against a real daemon", "[client][abi]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto r = Run({ATRACE_C99_EXAMPLE, d.socket(), "from_c"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::string path = Trim(r.out);
  CHECK(path.substr(path.rfind('/') + 1) == "schedule_tracer_from_c.txt");
  CHECK(ReadFile(path) == "written from C99\n");

  auto absent = Run({ATRACE_C99_EXAMPLE, d.tmp() / "none.sock", "x"});
  CHECK(absent.exit_code == 1);
  CHECK(absent.err.find("not found") != std::string::npos);
}

TEST_CASE("install, then consume with pkg-config and with find_package", "[client][install]") {
  TempDir tmp;
  std::string prefix = tmp / "prefix";
  auto install = Run({ATRACE_CMAKE_COMMAND, "--install", ATRACE_BUILD_DIR, "--prefix", prefix, "--component", "client"});
  INFO(install.out << install.err);
  REQUIRE(install.exit_code == 0);
  auto libdir = Shell("ls -d " + prefix + "/lib*/pkgconfig " + prefix + "/lib/*/pkgconfig 2>/dev/null | head -1");
  std::string pcdir = Trim(libdir.out);
  REQUIRE_FALSE(pcdir.empty());
  std::string lib = pcdir.substr(0, pcdir.rfind('/'));
  CHECK(Exists(prefix + "/include/atraced/atrace_client.h"));
  CHECK(Exists(prefix + "/include/atraced/atrace_client.hpp"));
  CHECK(Exists(lib + "/libatrace_client.so.0"));
  CHECK(Exists(lib + "/cmake/AtraceClient/AtraceClientConfig.cmake"));
  CHECK(Exists(prefix + "/bin/atracectl"));

  DaemonProcess d;
  REQUIRE(d.Start());
  std::map<std::string, std::string> env{{"PKG_CONFIG_PATH", pcdir}, {"LD_LIBRARY_PATH", lib}};

  SECTION("pkg-config") {
    std::string exe = tmp / "consumer_pc";
    auto build = Shell(std::string(ATRACE_CXX_COMPILER) + " -std=c++17 " + ATRACE_CONSUMER_FLAGS + " " +
                           ATRACE_CONSUMER_DIR + "/consumer.cc -o " + exe + " $(pkg-config --cflags --libs atrace_client)",
                       env);
    INFO(build.err);
    REQUIRE(build.exit_code == 0);
    auto run = Run({exe, d.socket(), "via_pkgconfig"}, {.env = env});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(ReadFile(Trim(run.out)) == "from the consumer\n");
  }
  SECTION("find_package") {
    std::string build_dir = tmp / "consumer_build";
    auto configure = Run({ATRACE_CMAKE_COMMAND, "-S", ATRACE_CONSUMER_DIR, "-B", build_dir,
                          "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_CXX_COMPILER=" ATRACE_CXX_COMPILER,
                          std::string("-DCMAKE_CXX_FLAGS=") + ATRACE_CONSUMER_FLAGS});
    INFO(configure.out << configure.err);
    REQUIRE(configure.exit_code == 0);
    auto build = Run({ATRACE_CMAKE_COMMAND, "--build", build_dir});
    INFO(build.out << build.err);
    REQUIRE(build.exit_code == 0);
    auto run = Run({build_dir + "/consumer", d.socket(), "via_find_package"}, {.env = env});
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(ReadFile(Trim(run.out)) == "from the consumer\n");
  }
  SECTION("the installed atracectl finds the installed library") {
    auto run = Run({prefix + "/bin/atracectl", "--socket", d.socket(), "status", "--json"});
    INFO(run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("\"root\":") != std::string::npos);
  }
}
