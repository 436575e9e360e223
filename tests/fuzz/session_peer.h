// The client end of a fuzzed session: sends without blocking, runs the daemon's io_context
// between steps (one thread, as in the daemon), and reads replies with RecvWithFds so that
// every descriptor the daemon passes is received here and closed, never left to the kernel.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "atraced/base/send_fd.h"
#include "atraced/base/unique_fd.h"
#include "atraced/ipc/asio.h"

namespace atraced::fuzz {

class Peer {
 public:
  Peer(asio::io_context& io, int fd) : io_(io), fd_(fd) {}
  ~Peer() { ::close(fd_); }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  // Lets the session run whatever is ready (reads, handling, reply writes).
  void Pump() {
    io_.restart();
    io_.poll();
  }

  // Reads every reply byte there is. Each received descriptor goes to `use` (may be empty)
  // and is closed after it: a descriptor kept here would leak across iterations.
  void Drain(const std::function<void(int)>& use = {}) {
    char sink[65536];
    std::vector<UniqueFd> fds;
    while (RecvWithFds(fd_, sink, sizeof sink, MSG_DONTWAIT, 16, &fds, nullptr) > 0) {
      for (UniqueFd& fd : fds) {
        if (use) use(fd.get());
      }
      fds.clear();  // closes them
    }
  }

  // Sends all of `bytes`. A pipelining client does not read while it can send; when the
  // socket stays full (the daemon stopped reading because its replies are not read), it
  // reads, as any client must eventually. False once the session has closed the socket.
  bool Send(std::span<const uint8_t> bytes, const bool& closed) {
    int stalled = 0;
    while (!bytes.empty() && !closed) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        bytes = bytes.subspan(static_cast<size_t>(n));
        stalled = 0;
        continue;
      }
      if (n < 0 && errno != EAGAIN) return false;
      Pump();
      if (++stalled >= 8) Drain();
    }
    return !closed;
  }

  int fd() const { return fd_; }

 private:
  asio::io_context& io_;
  int fd_;
};

}  // namespace atraced::fuzz
