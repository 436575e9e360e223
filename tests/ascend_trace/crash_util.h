// Helpers of the crash tests (crash_test.cc, crash_signal_test.cc): the crash child started
// against a real daemon, and readers for the stackcore dirs it leaves.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "atraced/proto/ring_positions.h"
#include "support/daemon_process.h"
#include "support/reachable_program.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace crash_test {

using atraced::testing::DaemonProcess;
using atraced::testing::ListNames;
using atraced::testing::ReadFile;


// The child, started with $ATRACED_SOCKET pointing at `d`, once it printed "ready".
struct Child {
  pid_t pid = -1;
  bool reaped = false;
  int status = 0;

  int input = -1;  // the child's stdin (mode segv-on-input)

  // `env`: more NAME=value entries. No core file unless `core_dir` is given: the child then
  // runs there with an unlimited core size.
  // `stderr_path`: the child's stderr goes to that new file.
  // `as`: the user it runs as (the caller is root).
  Child(const DaemonProcess& d, const std::string& mode, int records, const std::vector<std::string>& env = {},
        const std::string& core_dir = "", const std::string& stderr_path = "",
        const atraced::testing::Identity* as = nullptr) {
    int out[2], in[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    // Under a sanitizer build the child is instrumented: keep the sanitizer's SIGSEGV handler
    // out of the way, so the library's handler and the default action are what is tested.
    std::vector<std::string> env_strings{"ATRACED_SOCKET=" + d.socket(), "ASAN_OPTIONS=handle_segv=0",
                                         "TSAN_OPTIONS=handle_segv=0"};
    env_strings.insert(env_strings.end(), env.begin(), env.end());
    // Another user may not reach the build tree (a checkout under a 0700 directory).
    const atraced::testing::ReachableProgram program =
        as != nullptr ? atraced::testing::Reachable(ASCEND_TRACE_CRASH_CHILD)
                      : atraced::testing::ReachableProgram{ASCEND_TRACE_CRASH_CHILD, "", ""};
    REQUIRE(program.why_not == "");
    if (!program.library_path.empty()) env_strings.push_back(program.LibraryPathEntry());
    std::vector<const char*> envp;
    for (const auto& e : env_strings) envp.push_back(e.c_str());
    envp.push_back(nullptr);
    const std::string count = std::to_string(records);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(out[1], 1);
      ::dup2(in[0], 0);
      if (!stderr_path.empty()) {
        const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (err < 0 || ::dup2(err, 2) != 2) ::_exit(125);
      }
      const rlimit core{core_dir.empty() ? 0 : RLIM_INFINITY, core_dir.empty() ? 0 : RLIM_INFINITY};
      ::setrlimit(RLIMIT_CORE, &core);
      if (!core_dir.empty() && ::chdir(core_dir.c_str()) != 0) ::_exit(126);
      if (as != nullptr && !atraced::testing::BecomeUser(*as)) ::_exit(124);
      const char* argv[] = {program.path.c_str(), mode.c_str(), count.c_str(), nullptr};
      ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp.data()));
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(in[0]);
    input = in[1];
    std::string got;
    pollfd p{out[0], POLLIN, 0};
    char buf[16];
    while (got.find('\n') == std::string::npos && ::poll(&p, 1, 10000) == 1) {
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    ::close(out[0]);
    REQUIRE(got == "ready\n");
  }
  ~Child() {
    if (input >= 0) ::close(input);
    if (!reaped && pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  int Wait() {
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    reaped = true;
    return status;
  }
};

// Reaps the child and requires that it died of `signo` / exited with `code`.
inline void RequireDiedOf(Child& child, int signo) {
  const int status = child.Wait();
  INFO("status " << status);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == signo);
}
inline void RequireExited(Child& child, int code) {
  const int status = child.Wait();
  INFO("status " << status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == code);
}

// Event dirs of `kind` for pid `pid`, as absolute paths.
inline std::vector<std::string> DirsOf(const DaemonProcess& d, const std::string& kind, pid_t pid) {
  std::vector<std::string> out;
  const std::string prefix = kind + "_event_" + std::to_string(pid) + "_";
  for (const auto& proc : ListNames(d.trace_dir())) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : ListNames(d.trace_dir() + "/" + proc)) {
      if (ev.rfind(prefix, 0) == 0) out.push_back(d.trace_dir() + "/" + proc + "/" + ev);
    }
  }
  return out;
}

// Waits until a stackcore dir of `pid` holds a report (the last file written is not
// awaited: the report is written first, then the rings, all in one turn of the loop).
inline std::vector<std::string> AwaitStackcore(const DaemonProcess& d, pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (d.LogHas("pid " + std::to_string(pid) + " (")) {
      auto dirs = DirsOf(d, "stackcore", pid);
      if (!dirs.empty()) return dirs;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

// The record texts of a .txt ring file (the part after CANN's time stamp).
// A ring save's last line, where each record sits in the ring (proto/ring_positions.h), is
// not a record: checked to name one position per line before it, and left out.
inline std::vector<std::string> Records(const std::string& path) {
  std::vector<std::string> out;
  std::string text = ReadFile(path);
  if (const auto positions = atraced::proto::FindRingPositions(text)) {
    text.resize(text.rfind("atraced: ring "));
    CHECK(positions->records.size() == static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    out.push_back(line.size() > 28 ? line.substr(28) : line);  // "YYYY-MM-DD hh:mm:ss.mmm.uuu "
    pos = nl + 1;
  }
  return out;
}

inline std::vector<std::string> Expected(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back("record " + std::to_string(i));
  return out;
}

inline std::string ReportOf(const std::string& dir, pid_t pid, const std::string& signo) {
  for (const auto& name : ListNames(dir)) {
    if (name.rfind("stackcore_tracer_" + signo + "_" + std::to_string(pid) + "_", 0) == 0) return ReadFile(dir + "/" + name);
  }
  FAIL("no stackcore_tracer_" << signo << "_" << pid << "_* in " << dir);
  return "";
}

// The report in `dir` of signal `signo`, whichever thread caught it.
inline std::string ThreadReportOf(const std::string& dir, const std::string& signo) {
  for (const auto& name : ListNames(dir)) {
    if (name.rfind("stackcore_tracer_" + signo + "_", 0) == 0) return ReadFile(dir + "/" + name);
  }
  FAIL("no stackcore_tracer_" << signo << "_* in " << dir);
  return "";
}

// The first line a child writes on `fd` (hang_child's "ready ..."), waiting at most 20 s
// between reads; closes `fd`.
inline std::string FirstLineOf(int fd) {
  std::string got;
  pollfd p{fd, POLLIN, 0};
  char buf[64];
  while (got.find('\n') == std::string::npos && ::poll(&p, 1, 20000) == 1) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return got;
}

}  // namespace crash_test
