#include "crash_channel.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "atraced/proto/wire.h"

namespace ascend_trace {
namespace {

// Read by the handlers: plain atomics, lock-free on every target we build for.
std::atomic<int> g_fd{-1};
std::atomic<pid_t> g_daemon_pid{0};
std::atomic<bool> g_stack_dump{false};  // the daemon granted ATR_FEATURE_STACK_DUMP
std::atomic<pid_t> g_owner{0};  // the claiming thread; 0: free
std::atomic<uint32_t> g_next_request_id{2};  // HELLO was 1
std::atomic<int> g_wait_ms{kDefaultCrashWaitMs};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free &&
              std::atomic<uint32_t>::is_always_lock_free);

void Nap() {
  timespec pause{0, 5 * 1000 * 1000};
  ::nanosleep(&pause, nullptr);
}

// Waits for `events` on fd until `deadline_ms`: true when ready.
bool WaitFor(int fd, short events, long long deadline_ms) {
  for (;;) {
    const long long left = deadline_ms - MonotonicMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r > 0) return (p.revents & (POLLERR | POLLNVAL)) == 0 || (p.revents & POLLIN);
    if (r < 0 && errno != EINTR) return false;
  }
}

// Reads exactly `size` bytes (into `out`, or discarded when out is null) by the deadline.
bool ReadExactly(int fd, unsigned char* out, size_t size, long long deadline_ms) {
  unsigned char scratch[256];
  size_t got = 0;
  while (got < size) {
    if (!WaitFor(fd, POLLIN, deadline_ms)) return false;
    unsigned char* into = out ? out + got : scratch;
    const size_t want = out ? size - got : (size - got < sizeof scratch ? size - got : sizeof scratch);
    const ssize_t n = ::recv(fd, into, want, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;  // hung up
    got += static_cast<size_t>(n);
  }
  return true;
}

uint32_t GetLe32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

pid_t Tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

}  // namespace

long long MonotonicMs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void PutLe32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

void PutRequestHeader(unsigned char* frame, uint16_t opcode, uint32_t payload_size, uint32_t request_id) {
  PutLe32(frame + 0, ATR_MAGIC);
  PutLe32(frame + 4, payload_size);
  frame[8] = static_cast<unsigned char>(opcode);
  frame[9] = static_cast<unsigned char>(opcode >> 8);
  frame[10] = frame[11] = 0;  // flags: a request
  PutLe32(frame + 12, request_id);
}

void SetCrashWaitMs(int ms) { g_wait_ms.store(ms); }
int CrashWaitMs() { return g_wait_ms.load(); }

Claim ClaimChannel(pid_t tid, long long deadline_ms) {
  for (;;) {
    pid_t owner = 0;
    if (g_owner.compare_exchange_strong(owner, tid)) return Claim::kClaimed;
    if (owner == tid) return Claim::kHeldByThisThread;
    if (MonotonicMs() >= deadline_ms) return Claim::kBusy;
    Nap();
  }
}

void ReleaseChannel() { g_owner.store(0); }
int ChannelFd() { return g_fd.load(); }
pid_t ChannelDaemonPid() { return g_daemon_pid.load(); }
uint32_t NextChannelRequestId() { return g_next_request_id.fetch_add(1); }

bool ChannelStackDump() { return g_stack_dump.load(); }

void SetCrashChannel(int fd, pid_t daemon_pid, bool stack_dump) {
  // A handler holds the channel for at most its wait; past that (it cannot be, but a stuck
  // claim must not stall the application forever) the descriptor is swapped anyway.
  const Claim claim = ClaimChannel(Tid(), MonotonicMs() + CrashWaitMs() + 1000);
  g_daemon_pid.store(daemon_pid);
  g_stack_dump.store(stack_dump);
  g_fd.store(fd);
  g_next_request_id.store(2);  // a new connection: its HELLO was 1
  if (claim == Claim::kClaimed) ReleaseChannel();
}

void ResetCrashChannelAfterFork() {
  g_fd.store(-1);
  g_daemon_pid.store(0);
  g_stack_dump.store(false);
  g_owner.store(0);
}

bool ChannelExchange(int fd, const unsigned char* frame, size_t size, uint32_t request_id, long long deadline_ms,
                     unsigned char* reply, size_t reply_cap, size_t* reply_len) {
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fd, frame + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLOUT, deadline_ms)) return false;
    } else {
      return false;  // the daemon is gone
    }
  }
  // Replies come in request order; one of an earlier request that gave up waiting may come
  // first: its header says how much to skip.
  for (;;) {
    unsigned char head[16];
    if (!ReadExactly(fd, head, sizeof head, deadline_ms)) return false;
    const uint32_t length = GetLe32(head + 4);
    if (GetLe32(head) != ATR_MAGIC || length > ATR_MAX_PAYLOAD) return false;  // not a stream we understand
    const bool ours = GetLe32(head + 12) == request_id;
    const size_t keep = ours && reply != nullptr ? (length < reply_cap ? length : reply_cap) : 0;
    if (!ReadExactly(fd, reply, keep, deadline_ms) || !ReadExactly(fd, nullptr, length - keep, deadline_ms)) return false;
    if (ours) {
      if (reply_len != nullptr) *reply_len = keep;
      return true;
    }
  }
}

}  // namespace ascend_trace
