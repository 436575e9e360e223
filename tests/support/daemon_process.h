// Runs the built atraced binary for integration tests: a temporary root and socket, a
// chosen environment, stderr captured to a file, and a clean or brutal stop.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace atraced::testing {

class DaemonProcess {
 public:
  struct Options {
    // Positional, so tests can write {args, env, use_root_flag, record_num, ...}.
    Options(std::vector<std::string> a = {}, std::map<std::string, std::string> e = {}, bool root_flag = true,
            std::optional<uint32_t> rn = 10, std::optional<unsigned long> nofile_limit = std::nullopt,
            std::optional<std::string> root_dir = std::nullopt)
        : args(std::move(a)), env(std::move(e)), use_default_root_flag(root_flag), record_num(rn),
          nofile(nofile_limit), root(std::move(root_dir)) {}
    std::vector<std::string> args;               // extra arguments
    std::map<std::string, std::string> env;      // set in the child
    bool use_default_root_flag = true;           // pass --root <root()>
    std::optional<uint32_t> record_num = 10;     // pass --record-num
    std::optional<unsigned long> nofile;         // RLIMIT_NOFILE for the daemon
    std::optional<std::string> root;             // --root this instead of <tmp>/root
    std::optional<std::string> socket;           // --socket this instead of <tmp>/s.sock
  };

  explicit DaemonProcess(Options options);
  DaemonProcess() : DaemonProcess(Options{}) {}
  ~DaemonProcess();

  // Starts the binary and waits until its socket accepts; false if it exited first.
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Sends `sig` and waits for the exit; returns the exit code (128+signal if killed),
  // or nullopt if it did not exit within `timeout`.
  std::optional<int> Stop(int sig = 15, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits for the process to exit on its own.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  // The exit code (128+signal if killed) of a process that exited during Start.
  std::optional<int> exited_during_start() const { return exited_; }
  void Signal(int sig);

  pid_t pid() const { return pid_; }
  // Number of descriptors the daemon has open (/proc/<pid>/fd).
  size_t OpenFds() const;
  const std::string& socket() const { return socket_; }
  std::string root() const { return options_.root.value_or(tmp_ / "root"); }
  std::string trace_dir() const { return root() + "/atrace"; }
  const TempDir& tmp() const { return tmp_; }
  std::string log() const;  // what it wrote to stderr so far
  bool LogHas(const std::string& needle) const { return log().find(needle) != std::string::npos; }
  // Waits until the log contains `needle`.
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  Options options_;
  std::optional<int> exited_;
  TempDir tmp_;
  std::string socket_;
  pid_t pid_ = -1;
};

// The daemon's descriptor count once it stops changing (connections that just hung up,
// such as the readiness probe of DaemonProcess::Start, have been reaped): unchanged for half
// a second, so a loaded machine's slow loop is not taken for a settled one.
size_t SettledFds(const DaemonProcess& d);
// Waits (up to `timeout`) until the daemon holds at most `target` descriptors: connections
// closed by the test are closed by the daemon when its loop gets to them. Returns the last
// count seen.
size_t FdsDownTo(const DaemonProcess& d, size_t target,
                 std::chrono::milliseconds timeout = std::chrono::milliseconds(20000));
// Counts event dirs of `kind` ("schedule", ...) under a trace dir, across process dirs.
size_t CountEventDirs(const std::string& trace_dir, const std::string& kind);
// Aged directories are deleted in the background, after the reply: waits (up to `timeout`)
// for the count on disk to reach `expected` and returns the last count seen.
// True once `path` no longer exists (aged directories are deleted in the background).
bool EventuallyGone(const std::string& path, std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
size_t SettledEventDirs(const std::string& trace_dir, const std::string& kind, size_t expected,
                        std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

}  // namespace atraced::testing
