// The unwind helper's live mode (kLiveArg in unwind_helper.h; LiveStacks in
// src/unwind_walk.h): every thread's stack of a process that keeps running (PROCESS_DUMP,
// `atracectl dump`), read with no help from it.
//
// One thread at a time: PTRACE_SEIZE (no signal is sent, unlike PTRACE_ATTACH's SIGSTOP),
// PTRACE_INTERRUPT, wait for that thread's stop, copy its registers and the top of its stack
// (from the stack pointer to the end of its mapping, at most kMaxStackCopy bytes), then
// PTRACE_DETACH, handing back any signal that arrived meanwhile, before the next thread is
// touched. A thread is held from the moment its stop is seen to the detach (what "held
// stopped" reports); before it stops it runs, or waits for a CPU as it would anyway. The walk
// runs afterwards on the copy, so the thread is held only for the copy, not
// for libdwfl reading ELF and DWARF files. The process as a whole never stops; its state,
// signal mask and pending signals are what they were (a thread's interrupted system call
// restarts, as under gdb).
//
// Not read at all (the report says why, the rings are still saved): a process that is traced
// already (a debugger), stopped, a zombie or exiting; likewise for one of its threads. A thread
// that does not stop within kThreadStopWait (it is inside the kernel, state D) is not waited
// for: the helper exits, which detaches it, and the threads after it are listed unread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace atraced::crash {

inline constexpr size_t kMaxStackCopy = size_t{1} << 20;
// The helper's nice value while a thread is held stopped (RLIMIT_NICE set before it drops
// root allows it; otherwise it stays at its own): a process whose threads keep every CPU busy
// would otherwise preempt the helper between the stop and the detach, and its thread waits.
// The copy and the detach are the helper's own code; unwinding, which parses the process's
// files, runs at the helper's normal priority.
inline constexpr int kStopNice = -10;
inline constexpr std::chrono::milliseconds kThreadStopWait{500};

// Why the stacks of a process (or one thread) with this /proc status text and this /proc
// stat text are not read; "" when they may be. Pure, for tests.
std::string WhyNoLiveStacks(const std::string& status_text, const std::string& stat_text);

}  // namespace atraced::crash
