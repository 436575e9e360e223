// halHdcSend / halHdcRecv: one send is one receive, whole.
//
// Framing: SOCK_STREAM with a 4-byte length in front of each message (as the real driver's
// own socket mode does). Not SOCK_SEQPACKET, which would keep boundaries by itself: a
// seqpacket message must fit the socket's send buffer, and raising that to 512 KiB needs
// net.core.wmem_max ≥ 1 MiB or CAP_NET_ADMIN, which CI machines do not promise.
//
// Waiting: the wait mode (0 forever, NOWAIT, WAIT_TIMEOUT in ms; WAIT_TIMEOUT wins) applies
// to the start of a message. Once its first byte is there the rest is read, or written,
// whole within kFrameDeadline; a frame cut off in the middle (a peer that died or stalls)
// leaves the stream unusable, so the session is marked closed, as the driver's would be.
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "hal_export.h"
#include "hal_state.h"

using namespace atraced::hal_double::drv;

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kFrameDeadline = std::chrono::seconds(10);
constexpr uint32_t kMaxFrame = 64u << 20;  // a sanity bound: peers with a larger MAX_SEGMENT still fit

// Milliseconds for poll(): -1 forever, 0 no wait, else what the flags ask for.
int WaitMs(UINT64 flag, UINT32 timeout) {
  if ((flag & HDC_FLAG_WAIT_TIMEOUT) != 0) return timeout > 0x7fffffffu ? 0x7fffffff : static_cast<int>(timeout);
  if ((flag & HDC_FLAG_NOWAIT) != 0) return 0;
  return -1;
}

drvError_t NoData(UINT64 flag) {
  return (flag & HDC_FLAG_WAIT_TIMEOUT) != 0 ? DRV_ERROR_WAIT_TIMEOUT : DRV_ERROR_NON_BLOCK;
}

// Waits for `events`; false on timeout. A hang-up counts as ready: the read or write
// that follows reports it.
bool WaitFor(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, ms);
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;
  }
}

int MsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

enum class Io { kOk, kClosed, kTimeout, kError };

Io WriteAll(int fd, const char* data, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!WaitFor(fd, POLLOUT, MsLeft(deadline))) return Io::kTimeout;
      continue;
    }
    return (errno == EPIPE || errno == ECONNRESET) ? Io::kClosed : Io::kError;
  }
  return Io::kOk;
}

Io ReadAll(int fd, char* data, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, data, size, MSG_DONTWAIT);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Io::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      if (!WaitFor(fd, POLLIN, MsLeft(deadline))) return Io::kTimeout;
      continue;
    }
    return errno == ECONNRESET ? Io::kClosed : Io::kError;
  }
  return Io::kOk;
}

// A frame broke off half-way: nothing after it can be parsed, so the session ends here.
void Break(Session& s) {
  s.closed = true;
  ::shutdown(s.fd, SHUT_RDWR);
}

}  // namespace

extern "C" {

hdcError_t halHdcSend(HDC_SESSION session, struct drvHdcMsg* pMsg, UINT64 flag, UINT32 timeout) {
  auto s = Sessions().Find(session);
  if (!s || !Msgs().Find(pMsg) || pMsg->count != 1) return Ret("halHdcSend", DRV_ERROR_INVALID_VALUE);
  const char* data = pMsg->bufList[0].pBuf;
  const int len = pMsg->bufList[0].len;
  if (data == nullptr || len <= 0) return Ret("halHdcSend", DRV_ERROR_INVALID_VALUE);
  Log("halHdcSend(len=%d, flag=%llu, timeout=%u)", len, flag, timeout);
  if (static_cast<uint32_t>(len) > MaxSegment()) return Ret("halHdcSend", DRV_ERROR_INVALID_VALUE);

  std::lock_guard lock(s->send_mu);
  if (s->closed) return Ret("halHdcSend", DRV_ERROR_SOCKET_CLOSE);
  const int wait = WaitMs(flag, timeout);
  if (!WaitFor(s->fd, POLLOUT, wait)) return Ret("halHdcSend", NoData(flag));
  const auto deadline = Clock::now() + (wait > 0 ? std::chrono::milliseconds(wait) : kFrameDeadline);
  const uint32_t size = static_cast<uint32_t>(len);
  char head[4];
  std::memcpy(head, &size, sizeof head);  // host order: both ends are the same machine
  Io io = WriteAll(s->fd, head, sizeof head, deadline);
  if (io == Io::kOk) io = WriteAll(s->fd, data, size, deadline);
  switch (io) {
    case Io::kOk:
      return Ret("halHdcSend", DRV_ERROR_NONE);
    case Io::kClosed:
      Break(*s);
      return Ret("halHdcSend", DRV_ERROR_SOCKET_CLOSE);
    case Io::kTimeout:
      Break(*s);
      return Ret("halHdcSend", DRV_ERROR_WAIT_TIMEOUT);
    case Io::kError:
      break;
  }
  Break(*s);
  return Ret("halHdcSend", DRV_ERROR_SEND_MESG);
}

hdcError_t halHdcRecv(HDC_SESSION session, struct drvHdcMsg* pMsg, int bufLen, UINT64 flag, int* recvBufCount,
                      UINT32 timeout) {
  (void)bufLen;  // unused by the real driver too
  auto s = Sessions().Find(session);
  auto m = Msgs().Find(pMsg);
  if (!s || !m || pMsg->count != 1 || recvBufCount == nullptr) return Ret("halHdcRecv", DRV_ERROR_INVALID_VALUE);
  // The driver allocates the receive buffer itself and refuses a head that still has one.
  if (pMsg->bufList[0].pBuf != nullptr) return Ret("halHdcRecv", DRV_ERROR_INVALID_VALUE);
  Log("halHdcRecv(flag=%llu, timeout=%u)", flag, timeout);

  std::lock_guard lock(s->recv_mu);
  if (s->closed) return Ret("halHdcRecv", DRV_ERROR_SOCKET_CLOSE);
  if (!WaitFor(s->fd, POLLIN, WaitMs(flag, timeout))) return Ret("halHdcRecv", NoData(flag));
  const auto deadline = Clock::now() + kFrameDeadline;
  uint32_t size = 0;
  char head[4];
  Io io = ReadAll(s->fd, head, sizeof head, deadline);
  if (io == Io::kOk) {
    std::memcpy(&size, head, sizeof size);
    if (size == 0 || size > kMaxFrame) io = Io::kError;
  }
  char* buf = nullptr;
  if (io == Io::kOk) {
    buf = static_cast<char*>(std::malloc(size));
    if (buf == nullptr) return Ret("halHdcRecv", DRV_ERROR_MALLOC_FAIL);
    io = ReadAll(s->fd, buf, size, deadline);
  }
  if (io != Io::kOk) {
    std::free(buf);
    // A clean EOF before a frame is the peer closing; anything else broke the stream.
    Break(*s);
    return Ret("halHdcRecv", io == Io::kClosed ? DRV_ERROR_SOCKET_CLOSE : DRV_ERROR_RECV_MESG);
  }
  pMsg->bufList[0].pBuf = buf;
  pMsg->bufList[0].len = static_cast<int>(size);
  m->driver_owned = true;
  *recvBufCount = 1;
  Log("halHdcRecv: %u bytes", size);
  return Ret("halHdcRecv", DRV_ERROR_NONE);
}

}  // extern "C"
