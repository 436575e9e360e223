#include "atraced/crash/proc_crash_inspector.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/crash/unwind_helper.h"

namespace atraced::crash {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxMapsBytes = 1 << 20;      // a huge address space still gives a bounded report
constexpr size_t kMaxBacktraceBytes = 64 << 10;
constexpr size_t kMaxThreads = 1024;

// Up to `limit` bytes of a /proc file; nullopt-like empty with `error` set when unreadable.
std::string ReadSmall(const std::string& path, size_t limit, int* error) {
  *error = 0;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    *error = errno;
    return {};
  }
  std::string out;
  char buf[8192];
  while (out.size() < limit) {
    const ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, limit - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

}  // namespace

CrashFacts ProcCrashInspector::Inspect(const CrashTarget& target, std::chrono::milliseconds budget) {
  CrashFacts f;
  f.threads = Threads(target.pid);
  f.maps = Maps(target.pid);
  f.backtrace = Backtrace(target.pid, target.tid, budget);
  return f;
}

std::string ProcCrashInspector::Threads(pid_t pid) const {
  const std::string dir = proc_root_ + "/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return "(not listed: " + dir + ": " + std::strerror(errno) + ")\n";
  std::vector<long> tids;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long t = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && t > 0) tids.push_back(t);
  }
  ::closedir(d);
  std::sort(tids.begin(), tids.end());
  std::string out;
  for (size_t i = 0; i < tids.size() && i < kMaxThreads; ++i) {
    int err = 0;
    std::string comm = ReadSmall(dir + "/" + std::to_string(tids[i]) + "/comm", 64, &err);
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    out += std::to_string(tids[i]) + " " + (err ? "(comm unreadable)" : comm) + "\n";
  }
  if (tids.size() > kMaxThreads) out += "(" + std::to_string(tids.size() - kMaxThreads) + " more not listed)\n";
  return out;
}

std::string ProcCrashInspector::Maps(pid_t pid) const {
  int err = 0;
  const std::string path = proc_root_ + "/" + std::to_string(pid) + "/maps";
  std::string maps = ReadSmall(path, kMaxMapsBytes, &err);
  if (err) return "(not read: " + path + ": " + std::strerror(err) + ")\n";
  if (maps.size() >= kMaxMapsBytes) maps += "\n(cut at " + std::to_string(kMaxMapsBytes) + " bytes)\n";
  return maps;
}

std::string ProcCrashInspector::Backtrace(pid_t pid, pid_t tid, std::chrono::milliseconds budget) const {
  // The thread must be one of the process's: a client may only have itself unwound.
  const std::string task = proc_root_ + "/" + std::to_string(pid) + "/task/" + std::to_string(tid);
  if (::access(task.c_str(), F_OK) != 0) {
    return "(none: thread " + std::to_string(tid) + " is not a thread of pid " + std::to_string(pid) + ")\n";
  }
  if (budget.count() <= 0) return "(none: no time to unwind)\n";  // the caller says why
  const auto deadline = Clock::now() + budget;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return std::string("(none: pipe: ") + std::strerror(errno) + ")\n";
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // the listening socket is not CLOEXEC under systemd
  const std::string pid_text = std::to_string(pid), tid_text = std::to_string(tid);
  const char* argv[] = {helper_.c_str(), kUnwindHelperFlag, pid_text.c_str(), tid_text.c_str(),
                        all_threads_ ? kAllThreadsArg : nullptr, nullptr};
  const char* envp[] = {nullptr};  // no DEBUGINFOD_URLS: the helper never goes to the network
  pid_t child = -1;
  const int spawned = ::posix_spawn(&child, helper_.c_str(), &actions, nullptr, const_cast<char* const*>(argv),
                                    const_cast<char* const*>(envp));
  ::posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (spawned != 0) return "(none: cannot start " + helper_ + ": " + std::strerror(spawned) + ")\n";

  std::string out;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    pollfd p{read_end.get(), POLLIN, 0};
    const int r = ::poll(&p, 1, RemainingMs(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < kMaxBacktraceBytes) out.append(buf, std::min(static_cast<size_t>(n), kMaxBacktraceBytes - out.size()));
  }
  // Killing the tracer detaches it: the process goes on to re-raise either way.
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  const auto reap_deadline = Clock::now() + std::chrono::seconds(1);
  pid_t reaped = 0;
  while ((reaped = ::waitpid(child, &status, WNOHANG)) == 0 && Clock::now() < reap_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (timed_out) {
    out += "(unwinding stopped: it took longer than " + std::to_string(budget.count()) + " ms)\n";
  } else if (reaped == child && WIFSIGNALED(status)) {
    out += "(the unwind helper died of signal " + std::to_string(WTERMSIG(status)) + ")\n";
  }
  if (out.empty()) out = "(none: the unwind helper printed nothing)\n";
  return out;
}

}  // namespace atraced::crash
