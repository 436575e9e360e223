// What the unwind helper's modes share (unwind_helper.h): small /proc reads, the thread list,
// and one thread's walk with libdwfl, turned into CANN's [stack] lines. The crash modes walk
// a thread held by libdwfl's own ptrace attach; the live mode (live_stacks.h) walks a copy
// of a thread taken while it was briefly stopped. Internal to atraced_crash.
#pragma once

#include <elfutils/libdwfl.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "atraced/crash/stack_format.h"
#include "atraced/proto/stack_report.h"
#include "elf_lookup.h"

namespace atraced::crash {

inline constexpr int kMaxFrames = 128;                // a runaway (recursive) stack still gives a bounded report
inline constexpr size_t kMaxTasksSearched = 1 << 16;  // for the crashing thread's NSpid

// Up to `limit` bytes of a /proc file; empty with `error` set when unreadable.
std::string ReadSmall(const std::string& path, size_t limit, int* error);
// The value of the "Key:" line of a /proc status file, without the key; empty if absent.
std::string StatusField(const std::string& status, const char* key);
// The thread ids of `pid`, ascending (at most kMaxTasksSearched).
std::vector<long> TaskIds(pid_t pid);
std::string TaskDir(pid_t pid, long tid);
// The thread's comm (the report's writer escapes it), or "(comm unreadable)".
std::string ThreadName(pid_t pid, long tid);

// One thread's walk: OnFrame appends each frame, with its module, symbol and source line.
struct Walk {
  Dwfl* dwfl = nullptr;
  std::vector<StackFrame> frames;
  std::string stopped;  // why the walk ended early, if it did
};
int OnFrame(Dwfl_Frame* state, void* arg);

// A thread's block in the [stack] section, numbered `number`, with no frames yet.
proto::ThreadStack ThreadOf(int number, pid_t pid, long tid);
// The walk's frames from `first` on, renumbered from #0 as CANN numbers them, and why it
// stopped early, if it did.
void AddFrames(const Walk& walk, size_t first, const std::map<std::string, uint64_t>& bases, proto::ThreadStack* t);
// One thread's block in [stack] (proto::ThreadBlock: bounded per frame and per thread).
void PrintStack(int number, pid_t pid, long tid, const Walk& walk, size_t first,
                const std::map<std::string, uint64_t>& bases);

// Reports the process's modules to `dwfl`: an errno, -1 for libdwfl's own error, or 0.
int ReportModules(Dwfl* dwfl, pid_t pid, const std::string& proc_dir);

// The live mode (atraced/crash/live_stacks.h): prints the backtrace section of `pid`, its
// threads one at a time, each a block (proto::ThreadBlock) with its frames and "(held stopped
// N us; ...)"; at the end a line with how many stacks were read and the longest stop, whose
// numbers are also left in `counts`. Returns 0 when some stack was read, else 1.
int LiveStacks(pid_t pid, ElfLookup* lookup, proto::StackCounts* counts);
// The counts section (unwind_helper.h), the last of the helper's output.
void PrintCounts(const proto::StackCounts& counts);

}  // namespace atraced::crash
