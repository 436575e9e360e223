// Runs atrace_fake_device for a test: starts it on a socket directory, waits until its
// control socket answers (by then its HDC server listens), sends control commands, and
// stops it. Needs no driver library itself, so a test of the real receiver can use it
// without the double being linked in.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace atraced::hal_double::testing {

// Paths the build wrote (compile definitions of the hal_double_testing target).
std::string FakeDeviceBinary();
std::string HalDoubleLibDir();         // holds libascend_hal.so (the full double) only
std::string HalDoublePartialLibDir();  // holds the variant with only the two platform functions

class FakeDevice {
 public:
  struct Options {
    std::string dir;   // the double's socket dir (ATRACE_HAL_DOUBLE_DIR); the log and control socket go there too
    int device = 0;    // --device
    int phy = -1;      // --phy; -1: same as device
    std::vector<std::string> flags;           // --hello-silent, --hello-mismatch, --refuse-long-link, --close-long-links
    std::map<std::string, std::string> env;   // set in the child (e.g. ATRACE_HAL_DOUBLE_MAX_SEGMENT)
  };
  explicit FakeDevice(Options options);
  ~FakeDevice();  // quit, or SIGKILL after 2 s
  FakeDevice(const FakeDevice&) = delete;
  FakeDevice& operator=(const FakeDevice&) = delete;

  // Starts the program; true once its control socket answers "sessions".
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // One command, one reply line (without the newline); "" if the device did not answer.
  std::string Command(const std::string& line, std::chrono::milliseconds timeout = std::chrono::seconds(40)) const;
  bool Ok(const std::string& line) const { return Command(line).rfind("ok", 0) == 0; }
  // Waits until the long link of `host_pid` is a session node.
  bool WaitForSession(pid_t host_pid, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  // "quit" and wait for the exit; false if it had to be killed.
  bool Quit();
  void Kill(int sig);

  pid_t pid() const { return pid_; }
  const std::string& control() const { return control_; }
  std::string log() const;  // its stderr so far

 private:
  Options options_;
  std::string control_;
  std::string log_path_;
  pid_t pid_ = -1;
};

}  // namespace atraced::hal_double::testing
