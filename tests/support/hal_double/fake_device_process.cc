#include "fake_device_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace atraced::hal_double::testing {

std::string FakeDeviceBinary() { return ATRACE_FAKE_DEVICE_BINARY; }
std::string HalDoubleLibDir() { return ATRACE_HAL_DOUBLE_LIB_DIR; }
std::string HalDoublePartialLibDir() { return ATRACE_HAL_DOUBLE_PARTIAL_LIB_DIR; }

namespace {

using Clock = std::chrono::steady_clock;

bool Exited(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

FakeDevice::FakeDevice(Options options) : options_(std::move(options)) {
  const std::string dev = std::to_string(options_.device);
  control_ = options_.dir + "/control-dev" + dev + ".sock";
  log_path_ = options_.dir + "/fake-device-dev" + dev + ".log";
}

FakeDevice::~FakeDevice() {
  if (pid_ > 0 && !Quit()) Kill(SIGKILL);
}

bool FakeDevice::Start(std::chrono::milliseconds timeout) {
  std::vector<std::string> args = {FakeDeviceBinary(), "--dir", options_.dir, "--device",
                                   std::to_string(options_.device), "--control", control_};
  if (options_.phy >= 0) {
    args.push_back("--phy");
    args.push_back(std::to_string(options_.phy));
  }
  args.insert(args.end(), options_.flags.begin(), options_.flags.end());
  pid_ = ::fork();
  if (pid_ < 0) return false;
  if (pid_ == 0) {
    const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log >= 0) ::dup2(log, 2);
    for (const auto& [k, v] : options_.env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (Command("sessions", std::chrono::milliseconds(500)).rfind("ok", 0) == 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string FakeDevice::Command(const std::string& line, std::chrono::milliseconds timeout) const {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (control_.size() >= sizeof addr.sun_path) return "";
  std::memcpy(addr.sun_path, control_.data(), control_.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  std::string reply;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string out = line + "\n";
    if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size())) {
      const auto deadline = Clock::now() + timeout;
      char buf[512];
      while (reply.find('\n') == std::string::npos) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        pollfd p{fd, POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        reply.append(buf, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  const size_t nl = reply.find('\n');
  return nl == std::string::npos ? "" : reply.substr(0, nl);
}

bool FakeDevice::WaitForSession(pid_t host_pid, std::chrono::milliseconds timeout) const {
  return Command("wait-session " + std::to_string(host_pid) + " " + std::to_string(timeout.count()),
                 timeout + std::chrono::seconds(2))
             .rfind("ok", 0) == 0;
}

bool FakeDevice::Quit() {
  if (pid_ <= 0) return true;
  Command("quit", std::chrono::seconds(2));
  const bool clean = Exited(pid_, std::chrono::seconds(2));
  if (clean) pid_ = -1;
  return clean;
}

void FakeDevice::Kill(int sig) {
  if (pid_ <= 0) return;
  ::kill(pid_, sig);
  if (sig == SIGKILL || sig == SIGTERM) {
    Exited(pid_, std::chrono::seconds(5));
    pid_ = -1;
  }
}

std::string FakeDevice::log() const {
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace atraced::hal_double::testing
