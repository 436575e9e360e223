#include "crash_handler.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
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
#include "crash_channel.h"

namespace ascend_trace {
namespace {

// CANN's set; the last three only where the application left the default disposition, so
// that its own graceful SIGTERM/SIGINT handling is never turned into a crash report.
constexpr int kFatalSignals[] = {SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ, SIGSYS};
constexpr int kDefaultOnlySignals[] = {SIGINT, SIGTERM, SIGQUIT};
constexpr int kMaxWaitMs = 60000;
constexpr size_t kCrashReplyPathMax = 4096;  // PATH_MAX: a longer path is not told

bool g_enabled = true;
bool g_quiet = false;  // ATRACE_QUIET=1: no line on stderr (read at start-up: getenv is not for handlers)
bool g_installed = false;  // under State::mu
struct sigaction g_previous[NSIG];  // written before our handler is installed, read by it

std::atomic<pid_t> g_reporting_tid{0};  // the thread that reports; others wait for it
std::atomic<bool> g_report_done{false};

// One line on stderr naming the report a CRASH reply carries (ATR_FEATURE_CRASH_PATH: status
// 0, then the path as a u16-length string; nothing from a daemon that sends no path). write(2)
// only: no stdio, no allocation.
void TellReport(const unsigned char* reply, size_t len) {
  if (g_quiet || len < 10 || (reply[0] | reply[1] | reply[2] | reply[3]) != 0) return;
  const size_t path_len = static_cast<size_t>(reply[8]) | static_cast<size_t>(reply[9]) << 8;
  if (path_len == 0 || 10 + path_len > len || reply[10] != '/') return;
  static constexpr char kHead[] = "libascend_trace: crash report written to ";
  char line[sizeof kHead + kCrashReplyPathMax + 1];
  size_t n = sizeof kHead - 1;
  std::memcpy(line, kHead, n);
  for (size_t i = 0; i < path_len; ++i) {  // a control byte cannot end or forge the line
    const unsigned char c = reply[10 + i];
    line[n++] = c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
  }
  line[n++] = '\n';
  for (size_t off = 0; off < n;) {
    const ssize_t w = ::write(STDERR_FILENO, line + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    off += static_cast<size_t>(w);
  }
}

// Sends CRASH and waits for its reply (any status: the daemon did what it could). Only
// async-signal-safe calls: prctl, send, poll, recv, clock_gettime, nanosleep, write.
void Report(int signo, const siginfo_t* info, pid_t tid) {
  const long long deadline = MonotonicMs() + CrashWaitMs();
  // A dump in another thread may hold the channel: it lets go within the same bound. This
  // thread's own interrupted use (a fault inside the dump handler) cannot be waited for.
  if (ClaimChannel(tid, deadline) != Claim::kClaimed) return;
  if (const int fd = ChannelFd(); fd >= 0) {  // -1: no daemon offered CRASH, nothing to wait for
    // Under Yama ptrace_scope=1 only a named tracer (and its descendants: the daemon's
    // unwind helper) may attach. No effect, and harmless, where Yama is absent.
    if (const pid_t daemon = ChannelDaemonPid(); daemon > 0) ::prctl(PR_SET_PTRACER, daemon, 0, 0, 0);
    unsigned char frame[kCrashFrameSize];
    const bool has_addr = signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE || signo == SIGTRAP;
    const uint32_t id = NextChannelRequestId();
    BuildCrashFrame(signo, info ? info->si_code : 0, tid,
                    info && has_addr ? reinterpret_cast<uintptr_t>(info->si_addr) : 0, id, frame);
    unsigned char reply[10 + kCrashReplyPathMax];  // status, reserved, u16 length, path
    size_t got = 0;
    if (ChannelExchange(fd, frame, sizeof frame, id, deadline, reply, sizeof reply, &got)) TellReport(reply, got);
  }
  // Released although the process is about to die: an application handler chained after
  // ours may let it live on.
  ReleaseChannel();
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
    const long long deadline = MonotonicMs() + CrashWaitMs() + 1000;
    while (!g_report_done.load() && MonotonicMs() < deadline) {
      timespec pause{0, 10 * 1000 * 1000};
      ::nanosleep(&pause, nullptr);
    }
  }
  ::sigaction(signo, &g_previous[signo], nullptr);
  Reraise(signo, tid);
  errno = saved_errno;
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

void BuildCrashFrame(int signo, int code, pid_t tid, unsigned long long fault_addr, uint32_t request_id,
                     unsigned char* frame) {
  PutRequestHeader(frame, ATR_OP_CRASH, kCrashFrameSize - 16, request_id);
  PutLe32(frame + 16, static_cast<uint32_t>(signo));
  PutLe32(frame + 20, static_cast<uint32_t>(code));
  PutLe32(frame + 24, static_cast<uint32_t>(tid));
  PutLe32(frame + 28, 0);
  PutLe32(frame + 32, static_cast<uint32_t>(fault_addr));
  PutLe32(frame + 36, static_cast<uint32_t>(fault_addr >> 32));
}

void LoadCrashSettings() {
  if (const char* q = std::getenv("ATRACE_QUIET")) g_quiet = std::strcmp(q, "1") == 0;
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
                   kDefaultCrashWaitMs);
    } else {
      SetCrashWaitMs(static_cast<int>(ms));
    }
  }
}

bool CrashHandlersEnabled() { return g_enabled; }

void InstallCrashHandlers() {
  if (!g_enabled || g_installed) return;
  g_installed = true;
  for (int signo : kFatalSignals) Install(signo, false);
  for (int signo : kDefaultOnlySignals) Install(signo, true);
}

}  // namespace ascend_trace
