#include "support/daemon_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "support/raw_client.h"
#include "support/temp_dir.h"

#ifndef ATRACED_BINARY
#define ATRACED_BINARY "atraced"
#endif

namespace atraced::testing {

DaemonProcess::DaemonProcess(Options options)
    : options_(std::move(options)), socket_(options_.socket.value_or(tmp_ / "s.sock")) {}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool DaemonProcess::Start(std::chrono::milliseconds timeout) {
  std::vector<std::string> args{ATRACED_BINARY, "--socket", socket_, "--log-level", "debug"};
  if (options_.use_default_root_flag) {
    args.push_back("--root");
    args.push_back(root());
  }
  if (options_.record_num) {
    args.push_back("--record-num");
    args.push_back(std::to_string(*options_.record_num));
  }
  args.insert(args.end(), options_.args.begin(), options_.args.end());
  std::string log_path = tmp_ / "daemon.log";
  pid_ = ::fork();
  if (pid_ == 0) {
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 2);
    ::dup2(fd, 1);
    ::unsetenv("ASCEND_WORK_PATH");
    ::unsetenv("ASCEND_TRACE_RECORD_NUM");
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("LISTEN_FDS");
    ::unsetenv("LISTEN_PID");
    ::unsetenv("WATCHDOG_USEC");
    for (auto& [k, v] : options_.env) ::setenv(k.c_str(), v.c_str(), 1);
    if (options_.nofile) {
      struct rlimit rl {*options_.nofile, *options_.nofile};
      ::setrlimit(RLIMIT_NOFILE, &rl);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      exited_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return false;
    }
    if (LogHas("atraced ready") && RawClient::Connect(socket_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void DaemonProcess::Signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> DaemonProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

std::optional<int> DaemonProcess::Stop(int sig, std::chrono::milliseconds timeout) {
  Signal(sig);
  return Wait(timeout);
}

std::string DaemonProcess::log() const { return ReadFile(tmp_ / "daemon.log"); }

bool DaemonProcess::WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (LogHas(needle)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

size_t DaemonProcess::OpenFds() const { return pid_ > 0 ? ListNames("/proc/" + std::to_string(pid_) + "/fd").size() : 0; }

size_t SettledFds(const DaemonProcess& d) {
  size_t last = d.OpenFds();
  int same = 0;
  for (int i = 0; i < 200 && same < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const size_t now = d.OpenFds();
    same = now == last ? same + 1 : 0;
    last = now;
  }
  return last;
}

size_t FdsDownTo(const DaemonProcess& d, size_t target, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  size_t now = d.OpenFds();
  while (now > target && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    now = d.OpenFds();
  }
  return now;
}

size_t CountEventDirs(const std::string& trace_dir, const std::string& kind) {
  size_t n = 0;
  for (auto& proc : ListNames(trace_dir)) {
    for (auto& ev : ListNames(trace_dir + "/" + proc)) {
      if (ev.rfind(kind + "_event_", 0) == 0) ++n;
    }
  }
  return n;
}

bool EventuallyGone(const std::string& path, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Exists(path)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

size_t SettledEventDirs(const std::string& trace_dir, const std::string& kind, size_t expected,
                        std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t n = CountEventDirs(trace_dir, kind);
  while (n != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = CountEventDirs(trace_dir, kind);
  }
  return n;
}

}  // namespace atraced::testing
