// An OOM kill against the real daemon: a traced child in a memory cgroup with a small limit
// touches memory until the kernel's OOM killer SIGKILLs it. The daemon saves its rings and
// its report says the OOM killer did it. Needs root and a memory cgroup the test may create
// (cgroup v1 memory.limit_in_bytes, or v2 memory.max); skipped with a message otherwise.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "crash_util.h"

using namespace crash_test;

namespace {

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// A memory cgroup under the test process's own, limited to `limit` bytes; removed at the end.
class MemoryCgroup {
 public:
  static std::optional<MemoryCgroup> Create(const std::string& name, const std::string& limit, std::string* why) {
    if (::geteuid() != 0) {
      *why = "not root";
      return std::nullopt;
    }
    const std::string self = ReadFile("/proc/self/cgroup");
    std::string dir, limit_file;
    for (size_t pos = 0; pos < self.size();) {
      size_t nl = self.find('\n', pos);
      if (nl == std::string::npos) nl = self.size();
      const std::string line = self.substr(pos, nl - pos);
      pos = nl + 1;
      const size_t a = line.find(':'), b = line.find(':', a + 1);
      if (b == std::string::npos) continue;
      const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
      const std::string path = line.substr(b + 1);
      if (controllers.find(",memory,") != std::string::npos) {  // v1
        dir = "/sys/fs/cgroup/memory" + path;
        limit_file = "memory.limit_in_bytes";
      } else if (line.rfind("0::", 0) == 0 && dir.empty() && ::access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
        dir = "/sys/fs/cgroup" + (path == "/" ? "" : path);
        limit_file = "memory.max";
      }
    }
    if (dir.empty()) {
      *why = "no memory cgroup in /proc/self/cgroup";
      return std::nullopt;
    }
    MemoryCgroup cg(dir + "/" + name);
    if (::mkdir(cg.dir_.c_str(), 0755) != 0) {
      *why = "cannot create " + cg.dir_ + ": " + std::strerror(errno);
      cg.dir_.clear();
      return std::nullopt;
    }
    // v2 offers memory.max only where the parent delegates the memory controller.
    if (!WriteText(cg.dir_ + "/" + limit_file, limit)) {
      *why = "cannot write " + cg.dir_ + "/" + limit_file;
      return std::nullopt;
    }
    // Without a swap limit the process would swap instead of meeting the OOM killer.
    if (limit_file == "memory.limit_in_bytes") {
      WriteText(cg.dir_ + "/memory.memsw.limit_in_bytes", limit);
    } else {
      WriteText(cg.dir_ + "/memory.swap.max", "0");
    }
    return cg;
  }
  MemoryCgroup(MemoryCgroup&& other) noexcept : dir_(std::move(other.dir_)) { other.dir_.clear(); }
  ~MemoryCgroup() {
    // The reaped child has left it; a moment may pass before the kernel agrees.
    for (int i = 0; i < 50 && !dir_.empty() && ::rmdir(dir_.c_str()) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::string procs() const { return dir_ + "/cgroup.procs"; }

 private:
  explicit MemoryCgroup(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// The test's cgroup, limited to 64 MiB, or nullopt after saying why the test is skipped.
std::optional<MemoryCgroup> LimitedCgroupOrSkip(const std::string& test) {
  std::string why;
  auto cgroup = MemoryCgroup::Create("atraced-" + test + "-" + std::to_string(::getpid()), "67108864", &why);
  if (!cgroup) WARN("cannot make a memory-limited cgroup here (" << why << "); skipping");
  return cgroup;
}

}  // namespace

TEST_CASE("oom: a SIGKILLed child in a memory cgroup is said to be the OOM killer's exactly when it was", "[crash][oom]") {
  auto cgroup = LimitedCgroupOrSkip("oom-test");
  if (!cgroup) return;
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "oom", 5, {"CRASH_CHILD_CGROUP_PROCS=" + cgroup->procs()});
  std::string said;
  SECTION("the OOM killer ends it") {
    REQUIRE(::write(child.input, "x", 1) == 1);  // now it eats memory
    said = "oom: killed by the OOM killer (";
  }
  SECTION("its parent SIGKILLs it before it touches any memory") {
    REQUIRE(::kill(child.pid, SIGKILL) == 0);
    said = "oom: not by the OOM killer (";
  }
  auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  CHECK(Records(dirs[0] + "/schedule_tracer_crash_obj.txt") == Expected(0, 5));  // the rings are saved either way
  const std::string report = ReportOf(dirs[0], child.pid, "9");
  INFO(report);
  CHECK(report.find("how: killed by signal 9 (SIGKILL)\n" + said) != std::string::npos);
  // The counter is the new cgroup's: it started at 0.
  const bool oom = said.find("killed by") != std::string::npos;
  CHECK(report.find(oom ? " oom_kill went from 0 to 1)\n" : " oom_kill stayed at 0)\n") != std::string::npos);
  CHECK(d.LogHas("; " + said.substr(5)));
  RequireDiedOf(child, SIGKILL);
}
