#include "ping_pong.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench_util.h"

namespace atraced_bench {

PingPong::PingPong() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) Fail("socketpair");
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) Fail("fork");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(sv[0]);
    char buf[64];
    for (;;) {
      if (!ReadFull(sv[1], buf, sizeof buf)) ::_exit(0);
      if (!WriteFull(sv[1], buf, sizeof buf)) ::_exit(0);
    }
  }
  ::close(sv[1]);
  fd_ = sv[0];
}

PingPong::~PingPong() {
  ::close(fd_);
  ::waitpid(pid_, nullptr, 0);
}

void PingPong::Run(int n) {
  char buf[64];
  std::memset(buf, 'p', sizeof buf);
  for (int i = 0; i < n; ++i) {
    if (!WriteFull(fd_, buf, sizeof buf) || !ReadFull(fd_, buf, sizeof buf)) Fail("ping-pong broke");
  }
}

}  // namespace atraced_bench
