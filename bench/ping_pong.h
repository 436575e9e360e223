// The bare cost of one round trip: 64 bytes each way over a Unix socket pair between this
// process and a forked echo child. The "+ rtt" of every synchronous limit (churn, report,
// floor) is this figure, so all of them add the same thing.
#pragma once

#include <sys/types.h>

namespace atraced_bench {

class PingPong {
 public:
  // Forks the echo child (PR_SET_PDEATHSIG SIGKILL). Fork it before opening connections the
  // child must not hold copies of.
  PingPong();
  ~PingPong();
  PingPong(const PingPong&) = delete;
  PingPong& operator=(const PingPong&) = delete;

  // n ping-pongs, one after the other. Fails (BenchError) if the child went away.
  void Run(int n);

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace atraced_bench
