#include "support/subprocess.h"

#include "support/reachable_program.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace atraced::testing {
namespace {

// A descriptor closed at scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// An anonymous file holding `content`, read from its start. Output goes to such files rather
// than pipes: nothing the program writes can block it, and nothing is left on disk.
int MemoryFile(const char* name, const std::string& content) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

std::string ReadAll(int fd) {
  std::string text;
  char buf[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return text;
}

std::vector<std::string> Environment(const RunOptions& options) {
  std::vector<std::string> env;
  if (options.inherit_env) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv = *e;
      if (options.env.count(kv.substr(0, kv.find('='))) == 0) env.push_back(kv);
    }
  }
  for (const auto& [name, value] : options.env) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Waits for `pid` until `timeout`, then kills it and its process group and waits for it.
// (Without pidfd_open, it waits for the end, however long.)
int WaitBounded(pid_t pid, std::chrono::seconds timeout, bool* timed_out) {
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (pidfd.fd >= 0) {
    pollfd p{pidfd.fd, POLLIN, 0};
    int ready;
    while ((ready = ::poll(&p, 1, static_cast<int>(timeout.count() * 1000))) < 0 && errno == EINTR) {
    }
    if (ready == 0) {
      *timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

bool BecomeUser(uid_t id) {
  return ::setgroups(0, nullptr) == 0 && ::setresgid(id, id, id) == 0 && ::setresuid(id, id, id) == 0 &&
         ::prctl(PR_SET_DUMPABLE, 1) == 0;
}

bool BecomeUser(const Identity& who) {
  return ::setgroups(who.groups.size(), who.groups.data()) == 0 && ::setresgid(who.gid, who.gid, who.gid) == 0 &&
         ::setresuid(who.uid, who.uid, who.uid) == 0 && ::prctl(PR_SET_DUMPABLE, 1) == 0;
}

RunResult Run(const std::vector<std::string>& argv, const RunOptions& options) {
  RunResult r;
  if (argv.empty()) {
    r.err = "nothing to run";
    return r;
  }
  const bool become = options.uid.has_value() || options.as.has_value();
  // Everything the child needs is made before the fork: after it, the child only calls
  // what is safe in the copy of a process that may have other threads.
  std::vector<std::string> args = argv;
  std::vector<std::string> env = Environment(options);
  if (become && argv[0].find('/') != std::string::npos && !FirstUnreachable(argv[0]).empty()) {
    // Another user cannot reach the build tree: run a staged copy (support/reachable_program.h).
    const ReachableProgram staged = Reachable(argv[0]);
    if (!staged.why_not.empty()) {
      r.err = "cannot run " + argv[0] + " as another user: " + FirstUnreachable(argv[0]) + " is closed to it, and " +
              staged.why_not;
      return r;
    }
    args[0] = staged.path;
    if (!staged.library_path.empty()) {
      std::string value = staged.library_path;
      for (auto e = env.begin(); e != env.end(); ++e) {
        if (e->rfind("LD_LIBRARY_PATH=", 0) != 0) continue;
        value += ":" + e->substr(16);
        env.erase(e);
        break;
      }
      env.push_back("LD_LIBRARY_PATH=" + value);
    }
  }
  std::vector<char*> cargv = Pointers(args), cenv = Pointers(env);
  auto output = [](const std::string& path, const char* name) {
    return path.empty() ? MemoryFile(name, "") : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  };
  Fd in(MemoryFile("stdin", options.input)), out(output(options.stdout_file, "stdout")),
      err(output(options.stderr_file, "stderr"));
  int report[2];  // the child's errno if it could not start the program; closed by exec
  if (in.fd < 0 || out.fd < 0 || err.fd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    r.err = std::string("cannot set up the run: ") + std::strerror(errno);
    return r;
  }
  Fd report_read(report[0]), report_write(report[1]);
  const int err_fd = options.stderr_to_stdout ? out.fd : err.fd;
  const Identity who = options.as.value_or(Identity{options.uid.value_or(0), options.uid.value_or(0), {}});
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.err = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    // Its own process group, so that a timeout ends whatever it started too.
    ::setpgid(0, 0);
    if (::dup2(in.fd, 0) >= 0 && ::dup2(out.fd, 1) >= 0 && ::dup2(err_fd, 2) >= 0 && (!become || BecomeUser(who))) {
      ::execvpe(cargv[0], cargv.data(), cenv.data());
    }
    const int e = errno;
    (void)!::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  ::close(report_write.fd);
  report_write.fd = -1;
  int child_errno = 0;
  const bool not_started = ::read(report_read.fd, &child_errno, sizeof child_errno) == sizeof child_errno;
  const int status = WaitBounded(pid, options.timeout, &r.timed_out);
  if (not_started) {
    r.err = "cannot run " + argv[0] + ": " + std::strerror(child_errno);
    return r;
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exit_code = 128 + r.signal;
  }
  if (options.stdout_file.empty()) r.out = ReadAll(out.fd);
  if (options.stderr_file.empty() && !options.stderr_to_stdout) r.err = ReadAll(err.fd);
  return r;
}

}  // namespace atraced::testing
