// A rank of a test job: hccl_rank (tests/support/hccl_double) or a Python program, started with
// LD_PRELOAD=libatrace_hccl.so against a real daemon, its stdout read line by line.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "atraced/proto/ledger_reader.h"

namespace hccl_ledger_test {

class RankProcess {
 public:
  RankProcess(std::vector<std::string> argv, std::vector<std::string> env) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;
    std::vector<const char*> args, envp;
    for (const auto& a : argv) args.push_back(a.c_str());
    args.push_back(nullptr);
    for (const auto& e : env) envp.push_back(e.c_str());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::execve(args[0], const_cast<char**>(args.data()), const_cast<char**>(envp.data()));
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = out[0];
  }
  ~RankProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  pid_t pid() const { return pid_; }
  const std::string& output() const { return text_; }

  // Waits (up to 30 s) until the rank printed the line `line`.
  bool WaitForLine(const std::string& line) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (text_.find(line + "\n") == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || out_ < 0) return false;
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      char buf[512];
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) return text_.find(line + "\n") != std::string::npos;
      text_.append(buf, static_cast<size_t>(n));
    }
    return true;
  }
  // Waits (up to 30 s) for the exit; the wait status, or -1.
  int Wait() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  void Kill() {
    ::kill(pid_, SIGKILL);
    Wait();
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool reaped_ = false;
  std::string text_;
};

// Polls `done` every 50 ms for up to 30 s.
inline bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// The ledgers saved under `trace_dir` in event directories of `kind` ("stackcore", "exit",
// "schedule") of process `pid`, oldest name first; a file the daemon has made but not yet
// written (its header does not read yet) is left out.
inline std::vector<std::string> SavedLedgers(const std::string& trace_dir, const std::string& kind, pid_t pid) {
  std::vector<std::string> found;
  std::error_code ec;
  const std::string event = kind + "_event_" + std::to_string(pid) + "_";
  for (auto it = std::filesystem::recursive_directory_iterator(trace_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto& path = it->path();
    if (path.filename() == atraced::proto::kLedgerFileName &&
        path.parent_path().filename().string().rfind(event, 0) == 0) {
      atraced::proto::LedgerSnapshot snap;
      std::string why;
      if (atraced::proto::ReadLedgerFile(path.string(), &snap, &why) && snap.header_valid) found.push_back(path.string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace hccl_ledger_test
