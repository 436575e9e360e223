// The one way tests run another program to its end (Run), and a function of theirs in a
// process of its own (InChild): forked, waited for, and told apart by how they ended.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace atraced::testing {

// A user to become: uid, primary gid and supplementary groups (a login's, as initgroups gives).
struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups{};
};

// Every member has an initializer, so that g++ 12 accepts designated initializers that name
// only some of them (-Wmissing-field-initializers).
struct RunOptions {
  // Set in the program's environment, over this process's (or, with inherit_env false,
  // instead of it).
  std::map<std::string, std::string> env{};
  bool inherit_env = true;
  std::string input{};  // the program's stdin; it reads end of file after it
  // Run as this uid, with the same gid and no supplementary groups (the caller is root).
  std::optional<uid_t> uid{};
  // Run as this user with its groups (the caller is root); over `uid` when both are given.
  std::optional<Identity> as{};
  // One stream, in the order written, in RunResult::out (a shell's 2>&1).
  bool stderr_to_stdout = false;
  // Output too large to hold: left in these files (created, or truncated) instead of captured.
  std::string stdout_file{}, stderr_file{};
  // Killed with SIGKILL after this; a bound for a hang, far above what any program here takes.
  std::chrono::seconds timeout{100};
};

struct RunResult {
  int exit_code = -1;  // its exit status, 128 + the signal that ended it, or -1: it did not start
  int signal = 0;      // the signal that ended it, 0 if it exited
  bool timed_out = false;
  std::string out, err;  // err says why, when it did not start
};

// Runs argv[0] (a path, or a name looked up in PATH) with argv and waits for it to end.
RunResult Run(const std::vector<std::string>& argv, const RunOptions& options = {});

// Becomes uid and gid `id` for good, with no supplementary groups, and dumpable again as a
// freshly exec'd program is (the credential change made this process not dumpable).
bool BecomeUser(uid_t id);
// The same for a user with its own gid and supplementary groups.
bool BecomeUser(const Identity& who);

// InChild's exit codes for a body that could not run or did not return.
constexpr int kChildNotUser = 90;  // could not become the uid asked for
constexpr int kChildThrew = 91;

// Runs `body` (returning an exit code) in a forked child, as `uid` (with its gid) if given,
// and returns the child's exit code: what body returned, kChildNotUser, kChildThrew, or
// 128 + the signal that ended it. The child has its own pid, so its own connections and
// trace_ directory, and leaves through _exit: nothing of this process runs twice.
template <class F>
int InChild(F body, std::optional<uid_t> uid = std::nullopt) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (uid && !BecomeUser(*uid)) ::_exit(kChildNotUser);
    int rc = kChildThrew;
    try {
      rc = body();
    } catch (...) {
    }
    ::_exit(rc);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace atraced::testing
