// The crash connection (the second connection DaemonLink opens when the daemon offers
// ATR_FEATURE_CRASH), shared by two signal handlers: the fatal one (CRASH, crash_handler.h)
// and the on-demand dump (DUMP, dump_signal.h), and swapped by DaemonLink when it connects
// or drops. Everything a handler calls here is async-signal-safe: atomics, send, recv,
// poll, clock_gettime, nanosleep.
//
// One user at a time: a user claims the channel (an atomic owner tid) before it reads the
// descriptor and releases it after its exchange, so no one closes the descriptor under a
// handler, and two handlers never interleave frames. A handler that finds it taken either
// gives up (the dump) or waits a bounded time (the fatal handler).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace ascend_trace {

// ---- normal code (DaemonLink), with State::mu held ----
// The descriptor the handlers use (-1: none) and the daemon's pid (for PR_SET_PTRACER).
// Waits, bounded by the handlers' own wait, for a handler that still uses the old one.
// `stack_dump`: the daemon granted ATR_FEATURE_STACK_DUMP on it.
void SetCrashChannel(int fd, pid_t daemon_pid, bool stack_dump = false);
// In a forked child: the parent's claim (by a thread the child does not have) and its
// descriptor are forgotten without waiting.
void ResetCrashChannelAfterFork();
// How long a handler waits for the daemon, in ms (ASCEND_TRACE_CRASH_WAIT_MS).
inline constexpr int kDefaultCrashWaitMs = 5000;
void SetCrashWaitMs(int ms);
int CrashWaitMs();

// ---- signal handlers ----
enum class Claim { kClaimed, kBusy, kHeldByThisThread };
// Claims the channel for thread `tid`, waiting until `deadline_ms` (CLOCK_MONOTONIC, ms)
// while another thread holds it. kHeldByThisThread: this thread's own interrupted use
// (a handler that interrupted DaemonLink or another handler on the same thread).
Claim ClaimChannel(pid_t tid, long long deadline_ms);
void ReleaseChannel();
// While claimed: the descriptor (-1: no daemon) and the daemon's pid.
int ChannelFd();
pid_t ChannelDaemonPid();
// Whether the daemon takes STACK_DUMP on it.
bool ChannelStackDump();
// A request id not used before on this connection (its HELLO was 1).
uint32_t NextChannelRequestId();
// Sends `frame` and waits until `deadline_ms` for the reply carrying `request_id`, skipping
// the late replies of requests that gave up waiting earlier. True when it arrived; then the
// first `reply_cap` bytes of its payload are in `reply` (if given) and their count in
// `*reply_len`, the rest read and dropped.
bool ChannelExchange(int fd, const unsigned char* frame, size_t size, uint32_t request_id, long long deadline_ms,
                     unsigned char* reply = nullptr, size_t reply_cap = 0, size_t* reply_len = nullptr);

long long MonotonicMs();
// Little-endian, byte by byte (PROTOCOL.md, "Implementing a client in C").
void PutLe32(unsigned char* p, uint32_t v);
// A request frame's 16-byte header.
void PutRequestHeader(unsigned char* frame, uint16_t opcode, uint32_t payload_size, uint32_t request_id);

}  // namespace ascend_trace
