// The bench side of the null daemon: a plain blocking Unix socket, header and payload sent
// with one writev, replies read whole.
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bench_util.h"
#include "null_daemon.h"

namespace atraced_bench {

NullClient::NullClient(const std::string& socket) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket.size() >= sizeof addr.sun_path) Fail("null client: socket path too long: " + socket);
  std::memcpy(addr.sun_path, socket.c_str(), socket.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) Fail(std::string("socket: ") + std::strerror(errno));
  while (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd_);
    Fail("null client: connect " + socket + ": " + std::strerror(err));
  }
}

NullClient::~NullClient() { ::close(fd_); }

void NullClient::Send(uint32_t kind, const void* payload, size_t len) {
  if (len > kNullMaxPayload) Fail("null client: payload too large");
  NullHeader h{kind, static_cast<uint32_t>(len)};
  iovec v[2] = {{&h, sizeof h}, {const_cast<void*>(payload), len}};
  iovec* p = v;
  int n = len > 0 ? 2 : 1;
  while (n > 0) {
    ssize_t w = ::writev(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      Fail(std::string("null client: writev: ") + std::strerror(errno));
    }
    auto left = static_cast<size_t>(w);
    while (n > 0 && left >= p->iov_len) {
      left -= p->iov_len;
      ++p;
      --n;
    }
    if (n > 0) {
      p->iov_base = static_cast<char*>(p->iov_base) + left;
      p->iov_len -= left;
    }
  }
}

NullReply NullClient::Receive() {
  NullReply r{};
  if (!ReadFull(fd_, &r, sizeof r)) {
    Fail(std::string("null client: ") + (errno ? std::strerror(errno) : "the null daemon closed the connection"));
  }
  if (r.status != 0) Fail(std::string("null daemon: request failed: ") + std::strerror(-r.status));
  return r;
}

}  // namespace atraced_bench
