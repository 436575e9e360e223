// The unwinder, run as a separate process: `atraced --crash-unwind-helper PID TID` (the
// daemon re-executes itself through /proc/self/exe). It ptrace-attaches to the crashed
// process with elfutils' libdwfl, prints one line per frame of thread TID on stdout, and
// exits; detaching lets the process go on to re-raise its signal.
//
// Why a process and not a thread of the daemon: attaching can block (waitpid for a thread
// that does not stop), and libdwfl parses the crashed program's ELF and DWARF, which are
// the client's files. A helper can be killed at the deadline (which detaches it), and a bug
// it trips over costs a backtrace, not the daemon.
#pragma once

namespace atraced::crash {

inline constexpr const char* kUnwindHelperFlag = "--crash-unwind-helper";
inline constexpr const char* kAllThreadsArg = "all-threads";

// argv: {program, kUnwindHelperFlag, pid, tid[, kAllThreadsArg]}. Prints the frames of `tid`,
// then, with kAllThreadsArg, a "thread N:" section for each other thread. Returns the
// process's exit code: 0 with frames printed, 1 with a line saying why there are none, 2 for
// a bad command line.
int UnwindHelperMain(int argc, const char* const* argv);

}  // namespace atraced::crash
