// A program driven one line at a time: commands on its stdin, answers on its stdout, its
// stderr in a file. For the device tests and the device bench, which both run the drop-in's
// device application (tests/ascend_trace/device_child.c) this way.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>

namespace atraced::hal_double::testing {

class LineChild {
 public:
  // Starts `program` with exactly `env`; stderr goes to `err_path` ("" for /dev/null).
  // started() is false if the fork failed.
  LineChild(const std::string& program, const std::map<std::string, std::string>& env, const std::string& err_path);
  ~LineChild();  // SIGKILL and reap if it has not exited
  LineChild(const LineChild&) = delete;
  LineChild& operator=(const LineChild&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool Send(const std::string& command);
  // The next line of stdout without its newline; "" on timeout or end of file.
  std::string Line(std::chrono::milliseconds timeout);
  // Closes its stdin (end of commands) and reaps it; the wait status.
  int Wait();
  // The same, but -1 if it has not exited within `timeout` (the destructor kills it then).
  int Wait(std::chrono::milliseconds timeout);

 private:
  void CloseInput();

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace atraced::hal_double::testing
