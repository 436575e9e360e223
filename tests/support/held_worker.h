// Holds one of the daemon's I/O worker threads under ptrace, for tests that need a save
// queued or half-written whatever the machine's speed: the worker is stopped at once, and
// RunToWriteUnder lets it go, one system call at a time, until it enters write(2) on a file
// under a directory (a ring file of a save), where it stays until Release (or the daemon's
// death). The tracer is the thread that made the HeldWorker: call everything from it.
#pragma once

#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace atraced::testing {

// The threads of `pid` named `name` (/proc/<pid>/task/<tid>/comm).
inline std::vector<pid_t> ThreadsNamed(pid_t pid, const std::string& name) {
  std::vector<pid_t> found;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task.c_str());
  if (dir == nullptr) return found;
  while (const dirent* e = ::readdir(dir)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
    if (tid <= 0) continue;
    std::ifstream comm(task + "/" + e->d_name + "/comm");
    std::string line;
    if (std::getline(comm, line) && line == name) found.push_back(tid);
  }
  ::closedir(dir);
  return found;
}

class HeldWorker {
 public:
  HeldWorker(pid_t pid, pid_t tid) : pid_(pid), tid_(tid) {
    REQUIRE(::ptrace(PTRACE_SEIZE, tid_, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACESYSGOOD)) == 0);
    held_ = true;
    REQUIRE(::ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) == 0);
    int status = 0;
    REQUIRE(Wait(&status));
  }
  ~HeldWorker() { Release(); }
  HeldWorker(const HeldWorker&) = delete;
  HeldWorker& operator=(const HeldWorker&) = delete;

  // Runs the worker until it enters write(2) on a file under `dir` and stops it there; false
  // if it does not within `timeout` (it stays held wherever it is) or dies.
  bool RunToWriteUnder(const std::string& dir, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    int deliver = 0;
    while (std::chrono::steady_clock::now() < until) {
      if (::ptrace(PTRACE_SYSCALL, tid_, nullptr, reinterpret_cast<void*>(static_cast<long>(deliver))) != 0) return false;
      deliver = 0;
      int status = 0;
      if (!WaitUntil(&status, until)) return false;
      if (!WIFSTOPPED(status)) return held_ = false;  // gone
      const int sig = WSTOPSIG(status);
      if (sig == (SIGTRAP | 0x80)) {
        __ptrace_syscall_info info{};
        if (::ptrace(PTRACE_GET_SYSCALL_INFO, tid_, reinterpret_cast<void*>(sizeof info), &info) <= 0) continue;
        if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_write && WritesUnder(info.entry.args[0], dir)) {
          return true;
        }
      } else if ((status >> 16) == 0) {
        deliver = sig;  // a signal for the thread (not a ptrace event): passed on
      }
    }
    return false;
  }

  // Lets the worker go on (detached).
  void Release() {
    if (held_) ::ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
    held_ = false;
  }

  // After the daemon was killed: collects the worker's end, as its tracer must before the
  // process can be reaped.
  void ReapDead(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (held_ && WaitUntil(&status, until)) {
      if (WIFEXITED(status) || WIFSIGNALED(status)) held_ = false;
    }
    held_ = false;
  }

 private:
  bool Wait(int* status) { return ::waitpid(tid_, status, __WALL) == tid_; }
  bool WaitUntil(int* status, std::chrono::steady_clock::time_point until) {
    while (std::chrono::steady_clock::now() < until) {
      const pid_t got = ::waitpid(tid_, status, __WALL | WNOHANG);
      if (got == tid_) return true;
      if (got < 0) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  bool WritesUnder(uint64_t fd, const std::string& dir) const {
    char target[4096];
    const std::string link = "/proc/" + std::to_string(pid_) + "/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) return false;
    return std::string(target, static_cast<size_t>(n)).rfind(dir + "/", 0) == 0;
  }

  pid_t pid_;
  pid_t tid_;
  bool held_ = false;
};

}  // namespace atraced::testing
