// The fatal-signal handler of libascend_trace (issue 11, "a fatal signal that the library
// catches"). On CANN's set (SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU,
// SIGXFSZ, SIGSYS; SIGINT, SIGTERM, SIGQUIT only where their disposition is still the
// default) it sends CRASH over a connection of its own, opened in advance by DaemonLink,
// waits a bounded time for the daemon's reply (the daemon writes the stackcore dir and
// unwinds the thread from outside meanwhile), restores the previous disposition and
// re-raises, so the exit status, core dumps and systemd-coredump stay as they were. The
// connection is shared with the dump signal's handler (crash_channel.h).
//
// Environment, read once when the library loads:
//   ASCEND_COREDUMP_SIGNAL=none      no handler at all (as in CANN; another value is
//                                    reported on stderr and ignored, as in CANN)
//   ASCEND_TRACE_CRASH_WAIT_MS=N     how long the handler waits for the daemon, 0..60000,
//                                    default 5000; an invalid value is reported and ignored
//
// The handler runs on an alternate stack in every thread that has called the API
// (alt_stack.h), so a stack overflow there is reported too. A thread that never called it
// and overflows its stack dies without a report, as it would without the library.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace ascend_trace {

// Reads the environment (once; from the library's constructor).
void LoadCrashSettings();
// Whether handlers are wanted at all (ASCEND_COREDUMP_SIGNAL is not "none").
bool CrashHandlersEnabled();
// Installs the handlers once per process.
void InstallCrashHandlers();
// The CRASH frame the handler sends, built without allocating. Exposed for a test that
// compares it with the proto codec's encoding.
inline constexpr unsigned kCrashFrameSize = 16 + 24;
void BuildCrashFrame(int signo, int code, pid_t tid, unsigned long long fault_addr, uint32_t request_id,
                     unsigned char* frame);

}  // namespace ascend_trace
