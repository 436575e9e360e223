// Helpers for the systemd tests: a NOTIFY_SOCKET listener that records who sent what, and
// a child process started with an exact environment (nothing inherited that systemd would
// not set), stdout/stderr to a file, and an optional hook run between fork and exec.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"

namespace atraced::testing {

// True if `text` (newline-separated assignments, as sd_notify sends them) has the exact
// line `line`, e.g. HasLine(msg, "READY=1").
bool HasLine(const std::string& text, const std::string& line);
// The value of NAME= in `text`, if present.
std::optional<std::string> LineValue(const std::string& text, const std::string& name);

class NotifyListener {
 public:
  struct Message {
    std::string text;
    pid_t pid = 0;  // the sender, from SCM_CREDENTIALS
    std::chrono::steady_clock::time_point at;
  };

  // Binds an AF_UNIX datagram socket at `path` with SO_PASSCRED.
  explicit NotifyListener(std::string path);
  const std::string& path() const { return path_; }

  // The next datagram, or nullopt on timeout. Every message received is also kept in all().
  std::optional<Message> Receive(std::chrono::milliseconds timeout);
  // Receives until a message has the line `line` (e.g. "READY=1"); returns that message.
  std::optional<Message> WaitFor(const std::string& line, std::chrono::milliseconds timeout);
  const std::vector<Message>& all() const { return all_; }

 private:
  std::string path_;
  UniqueFd fd_;
  std::vector<Message> all_;
};

class ChildProcess {
 public:
  struct Options {
    std::vector<std::string> argv;           // argv[0] is an absolute path
    std::map<std::string, std::string> env;  // the child's whole environment (plus PATH, HOME)
    std::string output;                      // file for stdout and stderr
    // Runs in the child before exec; a nonzero return becomes the child's exit code.
    std::function<int()> before_exec;
  };
  explicit ChildProcess(Options options);
  ~ChildProcess();  // SIGKILL and reap if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // The exit code (128+signal if killed), or nullopt if still running after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  std::string output() const;

 private:
  Options options_;
  pid_t pid_ = -1;
};

// The comm of `pid` (/proc/PID/comm without the newline), "" if it is gone.
std::string CommOf(pid_t pid);
// True if a process `pid` exists (kill(pid, 0)).
bool Alive(pid_t pid);
// Polls `pred` every 10 ms until it is true or `timeout` passes.
bool WaitUntil(const std::function<bool()>& pred, std::chrono::milliseconds timeout);
// Full path of an executable found on PATH or in the usual system directories, "" if none.
std::string FindTool(const std::string& name);
// Sanitizer options of this process, to forward to children: {"ASAN_OPTIONS", ...}.
std::map<std::string, std::string> SanitizerEnv();

}  // namespace atraced::testing
