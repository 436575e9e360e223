#include "systemd_support.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/temp_dir.h"

namespace atraced::testing {

bool HasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    if (l == line) return true;
  }
  return false;
}

std::optional<std::string> LineValue(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    if (l.rfind(name + "=", 0) == 0) return l.substr(name.size() + 1);
  }
  return std::nullopt;
}

NotifyListener::NotifyListener(std::string path) : path_(std::move(path)) {
  fd_ = UniqueFd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd_.valid()) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path) throw std::runtime_error("notify socket path too long");
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("bind " + path_ + ": " + std::strerror(errno));
  }
  int one = 1;
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
}

std::optional<NotifyListener::Message> NotifyListener::Receive(std::chrono::milliseconds timeout) {
  pollfd p{fd_.get(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
  char buf[4096];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_DONTWAIT);
  if (n < 0) return std::nullopt;
  Message m;
  m.text.assign(buf, static_cast<size_t>(n));
  m.at = std::chrono::steady_clock::now();
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
      ucred cred;
      std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
      m.pid = cred.pid;
    }
  }
  all_.push_back(m);
  return m;
}

std::optional<NotifyListener::Message> NotifyListener::WaitFor(const std::string& line,
                                                               std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto m = Receive(left);
    if (!m) return std::nullopt;
    if (HasLine(m->text, line)) return m;
  }
}

ChildProcess::ChildProcess(Options options) : options_(std::move(options)) {
  std::map<std::string, std::string> env = options_.env;
  for (const char* keep : {"PATH", "HOME"}) {
    if (!env.count(keep) && std::getenv(keep) != nullptr) env[keep] = std::getenv(keep);
  }
  std::vector<std::string> env_strings;
  for (auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (auto& a : options_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid_ == 0) {
    int fd = ::open(options_.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    // A clean signal state: the test runner's blocked signals must not reach the daemon.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (options_.before_exec) {
      int rc = options_.before_exec();
      if (rc != 0) ::_exit(rc);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string ChildProcess::output() const { return ReadFile(options_.output); }

std::string CommOf(pid_t pid) {
  std::string comm = ReadFile("/proc/" + std::to_string(pid) + "/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

bool Alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

bool WaitUntil(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string FindTool(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/bin:/bin:/usr/sbin:/sbin";
  std::istringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::map<std::string, std::string> SanitizerEnv() {
  std::map<std::string, std::string> env;
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return env;
}

}  // namespace atraced::testing
