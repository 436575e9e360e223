#include "line_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace atraced::hal_double::testing {

LineChild::LineChild(const std::string& program, const std::map<std::string, std::string>& env,
                     const std::string& err_path) {
  int out[2], in[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return;
  if (::pipe2(in, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return;
  }
  std::vector<std::string> strings;
  for (const auto& [k, v] : env) strings.push_back(k + "=" + v);
  std::vector<const char*> envp;
  for (const auto& e : strings) envp.push_back(e.c_str());
  envp.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    const int err = err_path.empty() ? ::open("/dev/null", O_WRONLY)
                                     : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, 2);
    const char* argv[] = {program.c_str(), nullptr};
    ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp.data()));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(in[0]);
  out_ = out[0];
  in_ = in[1];
}

LineChild::~LineChild() {
  if (in_ >= 0) ::close(in_);
  if (out_ >= 0) ::close(out_);
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool LineChild::Send(const std::string& command) {
  const std::string line = command + "\n";
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = ::write(in_, line.data() + off, line.size() - off);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string LineChild::Line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (buffer_.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1) return "";
    char buf[256];
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return "";
    buffer_.append(buf, static_cast<size_t>(n));
  }
  const size_t nl = buffer_.find('\n');
  std::string line = buffer_.substr(0, nl);
  buffer_.erase(0, nl + 1);
  return line;
}

void LineChild::CloseInput() {
  if (in_ >= 0) {
    ::close(in_);
    in_ = -1;
  }
}

int LineChild::Wait() {
  CloseInput();
  int status = 0;
  if (::waitpid(pid_, &status, 0) != pid_) return -1;
  reaped_ = true;
  return status;
}

int LineChild::Wait(std::chrono::milliseconds timeout) {
  CloseInput();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      reaped_ = true;
      return status;
    }
    if (got != 0 || std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace atraced::hal_double::testing
