// CANN's on-demand dump: signal 35 (SIG_ATRACE in CANN's atrace, SIGRTMIN+1 under glibc)
// asks a running process to save its traces, and does not end it. CANN writes a stackcore
// dir from inside the handler; here the handler sends DUMP over the crash connection
// (crash_channel.h) and the daemon writes every registered, unreleased ring of the process
// into one schedule dir (RING_SAVE_ALL's files), while the handler waits for the reply at
// most ASCEND_TRACE_CRASH_WAIT_MS. Then the handler returns and the process runs on; the
// records stay in the rings (CANN's signal save consumes them).
//
// Installed when the library loads, so that the signal never kills a process that uses the
// library, daemon or not; only where the disposition is still the default (an application
// that handles 35 itself keeps it), and not at all under ASCEND_COREDUMP_SIGNAL=none, CANN's
// opt-out, where 35 keeps its default action (it terminates the process). SA_RESTART: the
// application's blocking calls go on as if nothing happened.
//
// Queued with CANN's stack-dump values (sigqueue, 0xAABB0003 or 0xAABB0002: asys collect
// -r=stacktrace), the handler sends STACK_DUMP instead, where the daemon granted it: the
// daemon writes the stackcore dir with the stacks asys waits for (docs/ASCEND_TRACE.md).
//
// Without a daemon, or while the channel is in use (a crash report, another dump, or
// DaemonLink reconnecting on the very thread the signal interrupted), the dump is skipped.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>

namespace ascend_trace {

inline constexpr int kDumpSignal = 35;

// Installs the handler once per process (the library's constructor; the environment is read
// by then, see crash_handler.h).
void InstallDumpHandler();

// The DUMP frame the handler sends, built without allocating. Exposed for a test that
// compares it with the proto codec's encoding.
inline constexpr unsigned kDumpFrameSize = 16 + 8;
void BuildDumpFrame(int signo, pid_t tid, uint32_t request_id, unsigned char* frame);

// CANN's on-demand stack dump: asys (collect -r=stacktrace) queues signal 35 with these
// values (sigqueue). With a daemon that grants ATR_FEATURE_STACK_DUMP the handler sends
// STACK_DUMP instead of DUMP, and the daemon writes the stackcore dir asys waits for.
inline constexpr uint32_t kStackDumpOneThread = 0xAABB0002u;
inline constexpr uint32_t kStackDumpAllThreads = 0xAABB0003u;
// The STACK_DUMP flags a queued signal asks for, or -1 for a plain dump (kill(), another
// value).
int StackDumpFlags(const siginfo_t* info);
inline constexpr unsigned kStackDumpFrameSize = 16 + 16;
void BuildStackDumpFrame(int signo, pid_t tid, uint32_t flags, uint32_t request_id, unsigned char* frame);

}  // namespace ascend_trace
