#include "dump_signal.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atraced/proto/wire.h"
#include "crash_channel.h"
#include "crash_handler.h"

namespace ascend_trace {
namespace {

// Only async-signal-safe calls (crash_channel.h); returns, so the process runs on.
void OnDumpSignal(int signo, siginfo_t* info, void*) {
  const int saved_errno = errno;
  const pid_t tid = static_cast<pid_t>(::syscall(SYS_gettid));
  const int stack_dump = StackDumpFlags(info);
  // No waiting for the channel: whoever holds it is reporting a crash (the process is about
  // to die) or already dumping; a dump now would add nothing worth stalling this thread for.
  if (ClaimChannel(tid, 0) == Claim::kClaimed) {
    if (const int fd = ChannelFd(); fd >= 0) {
      const uint32_t id = NextChannelRequestId();
      if (stack_dump >= 0 && ChannelStackDump()) {
        unsigned char frame[kStackDumpFrameSize];
        BuildStackDumpFrame(signo, tid, static_cast<uint32_t>(stack_dump), id, frame);
        ChannelExchange(fd, frame, sizeof frame, id, MonotonicMs() + CrashWaitMs());
      } else {
        unsigned char frame[kDumpFrameSize];
        BuildDumpFrame(signo, tid, id, frame);
        ChannelExchange(fd, frame, sizeof frame, id, MonotonicMs() + CrashWaitMs());
      }
    }
    ReleaseChannel();
  }
  errno = saved_errno;
}

}  // namespace

void BuildDumpFrame(int signo, pid_t tid, uint32_t request_id, unsigned char* frame) {
  PutRequestHeader(frame, ATR_OP_DUMP, kDumpFrameSize - 16, request_id);
  PutLe32(frame + 16, static_cast<uint32_t>(signo));
  PutLe32(frame + 20, static_cast<uint32_t>(tid));
}

int StackDumpFlags(const siginfo_t* info) {
  if (info == nullptr || info->si_code != SI_QUEUE) return -1;  // kill(): CANN's trace dump
  switch (static_cast<uint32_t>(info->si_value.sival_int)) {
    case kStackDumpAllThreads: return ATR_STACK_DUMP_ALL_THREADS;
    case kStackDumpOneThread: return 0;
    default: return -1;
  }
}

void BuildStackDumpFrame(int signo, pid_t tid, uint32_t flags, uint32_t request_id, unsigned char* frame) {
  PutRequestHeader(frame, ATR_OP_STACK_DUMP, kStackDumpFrameSize - 16, request_id);
  PutLe32(frame + 16, static_cast<uint32_t>(signo));
  PutLe32(frame + 20, static_cast<uint32_t>(tid));
  PutLe32(frame + 24, flags);
  PutLe32(frame + 28, 0);
}

void InstallDumpHandler() {
  if (!CrashHandlersEnabled()) return;
  struct sigaction previous {};
  if (::sigaction(kDumpSignal, nullptr, &previous) != 0) return;
  if (previous.sa_handler != SIG_DFL || (previous.sa_flags & SA_SIGINFO)) return;  // the application's
  struct sigaction ours {};
  ours.sa_sigaction = OnDumpSignal;
  // SA_ONSTACK where the thread has an alternate stack; SA_RESTART: see dump_signal.h.
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  ::sigaction(kDumpSignal, &ours, nullptr);
}

}  // namespace ascend_trace
