// The inspector of a crashed client, run as a separate process:
// `atraced --crash-unwind-helper PID TID UID GID MODE` (the daemon re-executes itself through
// /proc/self/exe). PID is in the daemon's pid namespace, TID as the process sees it, UID and
// GID the client's SO_PEERCRED.
//
// Still root, it reads only /proc/PID/status, and refuses a process whose real, effective,
// saved and file-system uids and gids are not all UID and GID (a setuid or setgid process, or
// someone else's). Then it becomes that user: the process's supplementary groups, then
// setresgid and setresuid to GID and UID, checks it cannot get root back, sets no_new_privs
// and limits its address space, CPU time and core size. Only then does it read the process:
// its threads (translating TID through each thread's NSpid), its maps, and, unless MODE is
// kFactsOnlyArg, the frames of that thread by ptrace with elfutils' libdwfl, opening ELF and
// debug files as elf_lookup.h says. From here the kernel's own ptrace checks decide (same
// credentials, dumpable, Yama): the helper can learn nothing the crashing user could not.
// A daemon that is not root inspects only processes of its own uid, without changing uid.
//
// Why a process and not a thread of the daemon: it changes its credentials, attaching can
// block (waitpid for a thread that does not stop), and libdwfl parses the crashed program's
// ELF and DWARF, which are the client's files. A helper can be killed at the deadline (which
// detaches it), and a bug it trips over costs a report, not the daemon.
#pragma once

namespace atraced::crash {

inline constexpr const char* kUnwindHelperFlag = "--crash-unwind-helper";
inline constexpr const char* kFactsOnlyArg = "facts-only";  // threads and maps, no unwinding
inline constexpr const char* kUnwindArg = "unwind";         // and the frames of TID
inline constexpr const char* kAllThreadsArg = "all-threads";  // and then every other thread's
inline constexpr const char* kLiveArg = "live";  // every thread of a running process, one at a time (live_stacks.h)

// The helper's stdout is three sections, each opened by this byte and its name on a line:
// "threads", "maps", "backtrace", and in live mode a fourth, "counts" (proto::StackCounts:
// the threads, the stacks read, the longest stop). Every byte that comes from the process
// (thread names, paths, symbol names) is printed with control bytes escaped, so it cannot
// open a section.
inline constexpr char kSectionMark = '\x1e';

// argv: {program, kUnwindHelperFlag, pid, tid, uid, gid, mode}. Prints the sections; in the
// backtrace, in CANN's [stack] form (stack_format.h), "Thread 1 (tid, name)" and the frames
// of `tid` from the faulting one on, then, with kAllThreadsArg, "Thread 2 (...)", ... for
// each other thread, then what was skipped and the credentials it ran with; with kLiveArg, TID
// is ignored and every thread is read as live_stacks.h says. Returns the process's exit
// code: 0 with the facts printed, 1 when refused or with no frames (each section then has a
// line saying why), 2 for a bad command line.
int UnwindHelperMain(int argc, const char* const* argv);

}  // namespace atraced::crash
