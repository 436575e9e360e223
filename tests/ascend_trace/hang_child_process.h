// hang_child.c started for a test against a real daemon: with its environment (labels,
// ATRACE_HANG_TIMEOUT, HANG_TICK_MS, ...), as root or another user, once it printed "ready"
// and its main thread sleeps (or, ticking, has started); killed and reaped at scope exit
// unless the test ended it.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "crash_util.h"
#include "hardening/as_user.h"
#include "support/reachable_program.h"

namespace crash_test {

struct HangChild {
  pid_t pid = -1;
  pid_t ab = 0, ba = 0;  // the deadlocked threads
  bool reaped = false;

  HangChild(const DaemonProcess& d, std::vector<std::string> env, std::vector<std::string> args = {}, uid_t uid = 0) {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    // Another user may not reach the build tree (a checkout under a 0700 directory).
    const atraced::testing::ReachableProgram program =
        uid != 0 ? atraced::testing::Reachable(ASCEND_TRACE_HANG_CHILD)
                 : atraced::testing::ReachableProgram{ASCEND_TRACE_HANG_CHILD, "", ""};
    REQUIRE(program.why_not == "");
    env.insert(env.begin(), {"ATRACED_SOCKET=" + d.socket(), "ATRACE_QUIET=1"});
    if (!program.library_path.empty()) env.push_back(program.LibraryPathEntry());
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(out[1], 1);
      if (uid != 0 && !atraced::testing::BecomeUser(uid)) ::_exit(90);
      std::vector<const char*> envp, argv{program.path.c_str()};
      for (const auto& e : env) envp.push_back(e.c_str());
      envp.push_back(nullptr);
      for (const auto& a : args) argv.push_back(a.c_str());
      argv.push_back(nullptr);
      ::execve(argv[0], const_cast<char**>(argv.data()), const_cast<char**>(envp.data()));
      ::_exit(127);
    }
    ::close(out[1]);
    const std::string got = FirstLineOf(out[0]);
    REQUIRE(std::sscanf(got.c_str(), "ready %d %d", &ab, &ba) == 2);
  }
  ~HangChild() { End(); }
  HangChild(const HangChild&) = delete;
  HangChild& operator=(const HangChild&) = delete;

  void End() {
    if (reaped) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    reaped = true;
  }
};

}  // namespace crash_test
