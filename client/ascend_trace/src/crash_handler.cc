#include "crash_handler.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "atraced/proto/wire.h"

namespace ascend_trace {
namespace {

// CANN's set; the last three only where the application left the default disposition, so
// that its own graceful SIGTERM/SIGINT handling is never turned into a crash report.
constexpr int kFatalSignals[] = {SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS};
constexpr int kDefaultOnlySignals[] = {SIGINT, SIGTERM, SIGQUIT};
constexpr int kDefaultWaitMs = 5000;
constexpr int kMaxWaitMs = 60000;
constexpr size_t kAltStackBytes = 64 * 1024;

bool g_enabled = true;
int g_wait_ms = kDefaultWaitMs;
bool g_installed = false;  // under State::mu
struct sigaction g_previous[NSIG];  // written before our handler is installed, read by it

// Read by the handler: plain atomics, lock-free on every target we build for.
std::atomic<int> g_channel{-1};
std::atomic<pid_t> g_daemon_pid{0};
std::atomic<pid_t> g_reporting_tid{0};  // the thread that reports; others wait for it
std::atomic<bool> g_report_done{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free);

void PutU32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

long long NowMs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Waits for `events` on fd until `deadline_ms`: true when ready.
bool WaitFor(int fd, short events, long long deadline_ms) {
  for (;;) {
    const long long left = deadline_ms - NowMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r > 0) return (p.revents & (POLLERR | POLLNVAL)) == 0 || (p.revents & POLLIN);
    if (r < 0 && errno != EINTR) return false;
  }
}

// Sends CRASH and waits for its reply (any status: the daemon did what it could). Only
// async-signal-safe calls: prctl, send, poll, recv, clock_gettime.
void Report(int signo, const siginfo_t* info, pid_t tid) {
  const int fd = g_channel.load();
  if (fd < 0) return;  // no daemon offered CRASH: nothing to wait for
  // Under Yama ptrace_scope=1 only a named tracer (and its descendants: the daemon's unwind
  // helper) may attach. No effect, and harmless, where Yama is absent.
  if (const pid_t daemon = g_daemon_pid.load(); daemon > 0) ::prctl(PR_SET_PTRACER, daemon, 0, 0, 0);
  unsigned char frame[kCrashFrameSize];
  const bool has_addr = signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE || signo == SIGTRAP;
  BuildCrashFrame(signo, info ? info->si_code : 0, tid,
                  info && has_addr ? reinterpret_cast<uintptr_t>(info->si_addr) : 0, frame);
  const long long deadline = NowMs() + g_wait_ms;
  size_t sent = 0;
  while (sent < sizeof frame) {
    const ssize_t n = ::send(fd, frame + sent, sizeof frame - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLOUT, deadline)) return;
    } else {
      return;  // the daemon is gone
    }
  }
  // The reply: a 16-byte header (opcode CRASH, reply flag, our id) and a short payload.
  // Nothing else is ever sent on this connection, so the first frame is ours.
  unsigned char reply[16];
  size_t got = 0;
  while (got < sizeof reply) {
    if (!WaitFor(fd, POLLIN, deadline)) return;
    const ssize_t n = ::recv(fd, reply + got, sizeof reply - got, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return;  // hung up: done waiting either way
    got += static_cast<size_t>(n);
  }
}

void Reraise(int signo, pid_t tid) {
  // Blocked while this handler runs (no SA_NODEFER): delivered, with the disposition just
  // restored, as soon as the handler returns. A fault would come back by itself, but abort()
  // and kill() would not: re-raising covers both.
  ::syscall(SYS_tgkill, ::getpid(), tid, signo);
}

void OnFatalSignal(int signo, siginfo_t* info, void*) {
  const int saved_errno = errno;
  const pid_t tid = static_cast<pid_t>(::syscall(SYS_gettid));
  pid_t reporting = 0;
  if (g_reporting_tid.compare_exchange_strong(reporting, tid)) {
    Report(signo, info, tid);
    g_report_done.store(true);
  } else if (reporting == tid) {
    // A second fault inside this handler (the same signal cannot come back: the kernel
    // kills the process for a blocked fault). Report nothing more: die with the default.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(signo, &dfl, nullptr);
    Reraise(signo, tid);
    errno = saved_errno;
    return;
  } else {
    // Another thread is reporting: wait for it (bounded), then die of our own signal if its
    // re-raise has not ended the process by then.
    const long long deadline = NowMs() + g_wait_ms + 1000;
    while (!g_report_done.load() && NowMs() < deadline) {
      timespec pause{0, 10 * 1000 * 1000};
      ::nanosleep(&pause, nullptr);
    }
  }
  ::sigaction(signo, &g_previous[signo], nullptr);
  Reraise(signo, tid);
  errno = saved_errno;
}

void GiveThisThreadAnAltStack() {
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;  // it has one
  void* mem = ::mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) return;
  stack_t ss{};
  ss.ss_sp = mem;
  ss.ss_size = kAltStackBytes;
  if (::sigaltstack(&ss, nullptr) != 0) ::munmap(mem, kAltStackBytes);  // kept for the thread's life otherwise
}

bool Install(int signo, bool only_over_default) {
  struct sigaction previous {};
  if (::sigaction(signo, nullptr, &previous) != 0) return false;
  if (only_over_default && !(previous.sa_handler == SIG_DFL && !(previous.sa_flags & SA_SIGINFO))) return false;
  struct sigaction ours {};
  ours.sa_sigaction = OnFatalSignal;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  g_previous[signo] = previous;  // before ours is live: the handler reads it
  return ::sigaction(signo, &ours, nullptr) == 0;
}

}  // namespace

void BuildCrashFrame(int signo, int code, pid_t tid, unsigned long long fault_addr, unsigned char* frame) {
  PutU32(frame + 0, ATR_MAGIC);
  PutU32(frame + 4, 24);
  frame[8] = static_cast<unsigned char>(ATR_OP_CRASH);
  frame[9] = static_cast<unsigned char>(ATR_OP_CRASH >> 8);
  frame[10] = frame[11] = 0;
  PutU32(frame + 12, kCrashRequestId);
  PutU32(frame + 16, static_cast<uint32_t>(signo));
  PutU32(frame + 20, static_cast<uint32_t>(code));
  PutU32(frame + 24, static_cast<uint32_t>(tid));
  PutU32(frame + 28, 0);
  PutU32(frame + 32, static_cast<uint32_t>(fault_addr));
  PutU32(frame + 36, static_cast<uint32_t>(fault_addr >> 32));
}

void LoadCrashSettings() {
  if (const char* v = std::getenv("ASCEND_COREDUMP_SIGNAL")) {
    if (std::strcmp(v, "none") == 0) {
      g_enabled = false;
    } else {
      std::fprintf(stderr, "libascend_trace: ASCEND_COREDUMP_SIGNAL=%s is invalid (only \"none\"), using the default\n", v);
    }
  }
  if (const char* v = std::getenv("ASCEND_TRACE_CRASH_WAIT_MS")) {
    char* end = nullptr;
    const long ms = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || ms < 0 || ms > kMaxWaitMs) {
      std::fprintf(stderr, "libascend_trace: ASCEND_TRACE_CRASH_WAIT_MS=%s is invalid (0..%d), using %d\n", v, kMaxWaitMs,
                   kDefaultWaitMs);
    } else {
      g_wait_ms = static_cast<int>(ms);
    }
  }
}

bool CrashHandlersEnabled() { return g_enabled; }

void InstallCrashHandlers() {
  if (!g_enabled || g_installed) return;
  g_installed = true;
  GiveThisThreadAnAltStack();
  for (int signo : kFatalSignals) Install(signo, false);
  for (int signo : kDefaultOnlySignals) Install(signo, true);
}

void SetCrashChannel(int fd, pid_t daemon_pid) {
  g_daemon_pid.store(daemon_pid);
  g_channel.store(fd);
}

}  // namespace ascend_trace
