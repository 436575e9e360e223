// atraced started by a user other than root: where it cannot listen or write, start-up stops
// with the cause and what to do, before it makes anything.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/temp_dir.h"

#ifndef ATRACED_BINARY
#error "ATRACED_BINARY must be defined"
#endif

using namespace atraced::testing;

namespace {

constexpr uid_t kUser = 65534;

struct Outcome {
  int exit_code = -1;
  std::string err;
};

// Runs atraced as uid/gid kUser with only HOME and PATH in its environment (no
// XDG_RUNTIME_DIR, as under su or cron), its stderr in `log`.
Outcome RunAsUser(const std::vector<std::string>& args, const std::string& home, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, 2) < 0) ::_exit(120);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kUser, kUser, kUser) != 0 || ::setresuid(kUser, kUser, kUser) != 0) {
      ::_exit(121);
    }
    std::vector<std::string> argv_s{ATRACED_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string home_var = "HOME=" + home;
    std::string path_var = "PATH=/usr/bin:/bin";
    char* envp[] = {home_var.data(), path_var.data(), nullptr};
    ::execve(argv[0], argv.data(), envp);
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), ReadFile(log)};
}

bool CanRunAsUser() {
  if (::geteuid() != 0) return false;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kUser, kUser, kUser) != 0 || ::setresuid(kUser, kUser, kUser) != 0) {
      ::_exit(1);
    }
    ::_exit(::access(ATRACED_BINARY, X_OK) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("a user without XDG_RUNTIME_DIR is told to give --socket, and no trace root is made first",
          "[integration][socket]") {
  if (!CanRunAsUser()) {
    WARN("skipped: needs root, and a build tree uid 65534 may run");
    return;
  }
  TempDir tmp;
  REQUIRE(::chmod(tmp.path().c_str(), 0755) == 0);
  const std::string home = tmp / "home";
  REQUIRE(::mkdir(home.c_str(), 0755) == 0);
  REQUIRE(::chown(home.c_str(), kUser, kUser) == 0);
  // Without --socket the default is /run/atraced/atraced.sock, which only root may make.
  auto r = RunAsUser({"--record-num", "10"}, home, tmp / "err.log");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot listen on /run/atraced/atraced.sock: uid 65534 may not write in /run") != std::string::npos);
  CHECK(r.err.find("XDG_RUNTIME_DIR is unset") != std::string::npos);
  CHECK(r.err.find("give --socket a path in a directory this user may write") != std::string::npos);
  CHECK(r.err.find("or set XDG_RUNTIME_DIR") != std::string::npos);
  CHECK_FALSE(Exists(home + "/ascend"));  // it stopped before making the trace root
}

TEST_CASE("a trace root the user may not write names the uid and how to fix it", "[integration][root]") {
  if (!CanRunAsUser()) {
    WARN("skipped: needs root, and a build tree uid 65534 may run");
    return;
  }
  TempDir tmp;
  REQUIRE(::chmod(tmp.path().c_str(), 0755) == 0);
  const std::string locked = tmp / "locked";  // root's, 0755: readable, not writable by the user
  REQUIRE(::mkdir(locked.c_str(), 0755) == 0);
  const std::string home = tmp / "home";
  REQUIRE(::mkdir(home.c_str(), 0755) == 0);
  REQUIRE(::chown(home.c_str(), kUser, kUser) == 0);
  auto r = RunAsUser({"--root", locked, "--socket", home + "/s.sock"}, home, tmp / "err.log");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("trace root [" + locked + "] is unusable: not writable by uid 65534: Permission denied: give this "
                   "user write access to it (chown or chmod), run atraced as its owner, or choose another root "
                   "(--root, or root = in atraced.conf)") != std::string::npos);
  CHECK_FALSE(Exists(home + "/s.sock"));
}
