#include "atraced/crash/live_stacks.h"

#include <elf.h>
#include <elfutils/libdwfl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "atraced/crash/stack_format.h"
#include "atraced/crash/unwind_helper.h"
#include "atraced/proto/stack_report.h"
#include "unwind_walk.h"

namespace atraced::crash {
namespace {

using Clock = std::chrono::steady_clock;

#if defined(__x86_64__)
constexpr size_t kRedZone = 128;  // below the stack pointer, the System V ABI's leaf functions' scratch
#else
constexpr size_t kRedZone = 0;
#endif

// What a thread left while it was stopped: its registers and the top of its stack.
struct ThreadCopy {
  long tid = 0;
  user_regs_struct regs{};
  uint64_t stack_at = 0;  // the address of stack[0]
  std::vector<uint8_t> stack;
};

// libdwfl's view of the copies: one thread, the one being walked.
struct Snapshot {
  pid_t pid = 0;
  ThreadCopy* current = nullptr;
};

bool ReadLive(pid_t pid, uint64_t address, void* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

pid_t NextThread(Dwfl*, void* arg, void** thread_arg) {
  auto* s = static_cast<Snapshot*>(arg);
  if (*thread_arg != nullptr || s->current == nullptr) return 0;  // only the current copy
  *thread_arg = s->current;
  return static_cast<pid_t>(s->current->tid);
}

bool GetThread(Dwfl*, pid_t tid, void* arg, void** thread_arg) {
  auto* s = static_cast<Snapshot*>(arg);
  if (s->current == nullptr || s->current->tid != tid) return false;
  *thread_arg = s->current;
  return true;
}

// A word of the stack from the copy; anything else (a frame beyond the copy, the vDSO) from
// the process as it is now, which needs no stop.
bool MemoryRead(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* arg) {
  auto* s = static_cast<Snapshot*>(arg);
  if (const ThreadCopy* t = s->current;
      t != nullptr && address >= t->stack_at && address - t->stack_at + sizeof *result <= t->stack.size()) {
    std::memcpy(result, t->stack.data() + (address - t->stack_at), sizeof *result);
    return true;
  }
  return ReadLive(s->pid, address, result, sizeof *result);
}

// The registers in DWARF's numbering, as elfutils' backends set them from a live thread.
bool SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg) {
  const user_regs_struct& r = static_cast<ThreadCopy*>(thread_arg)->regs;
#if defined(__x86_64__)
  const Dwarf_Word regs[17] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
                               r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip};
  if (!dwfl_thread_state_registers(thread, 0, 17, regs)) return false;
  dwfl_thread_state_register_pc(thread, r.rip);
#elif defined(__aarch64__)
  Dwarf_Word regs[32];
  for (int i = 0; i < 31; ++i) regs[i] = r.regs[i];
  regs[31] = r.sp;
  if (!dwfl_thread_state_registers(thread, 0, 32, regs)) return false;
  dwfl_thread_state_register_pc(thread, r.pc);
#else
#error "live stacks: add this architecture's registers"
#endif
  return true;
}

uint64_t StackPointer(const user_regs_struct& r) {
#if defined(__x86_64__)
  return r.rsp;
#else
  return r.sp;
#endif
}

// The mapping of `maps` that holds `address`: [start, end); false if none does.
bool MappingOf(const std::string& maps, uint64_t address, uint64_t* start, uint64_t* end) {
  std::istringstream in(maps);
  std::string line;
  while (std::getline(in, line)) {
    char* rest = nullptr;
    const uint64_t lo = std::strtoull(line.c_str(), &rest, 16);
    if (rest == nullptr || *rest != '-') continue;
    const uint64_t hi = std::strtoull(rest + 1, nullptr, 16);
    if (address >= lo && address < hi) {
      *start = lo;
      *end = hi;
      return true;
    }
  }
  return false;
}

int64_t Micros(Clock::duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); }

enum class Stop { kStopped, kExited, kNot };

// Waits for the seized thread's stop (SIGCHLD is blocked, so its arrival waits for us).
// kStopped: `signo` is the signal it stopped to take (0 for the interrupt or a group stop),
// which the detach hands back. kExited: it is gone, and no longer traced. kNot: it did not
// stop, and is still seized; `why` says why.
Stop WaitForStop(long tid, int* signo, std::string* why) {
  const auto deadline = Clock::now() + kThreadStopWait;
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(static_cast<pid_t>(tid), &status, __WALL | WNOHANG);
    if (r == tid && WIFSTOPPED(status)) {
      *signo = (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
      return Stop::kStopped;
    }
    if (r == tid) {
      *why = "it exited while the dump waited for it";
      return Stop::kExited;
    }
    if (r < 0 && errno != EINTR) {
      *why = std::string("waitpid: ") + std::strerror(errno);
      return Stop::kNot;
    }
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) {
      *why = "it did not stop within " + std::to_string(kThreadStopWait.count()) +
             " ms (it is inside the kernel, state D)";
      return Stop::kNot;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const timespec wait{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    ::sigtimedwait(&chld, nullptr, &wait);
  }
}

enum class Held { kCopied, kNotRead, kStuck };

// Seizes, stops and copies one thread, and lets it go. kStuck: it is still seized (it did not
// stop, so it cannot be detached): the caller must exit, which lets it go.
// `held_us`: from the stop seen to the detach; `asked_us`: from the interrupt to the stop seen.
Held StopAndCopy(pid_t pid, const std::string& maps, ThreadCopy* copy, int64_t* held_us, int64_t* asked_us,
                 std::string* why);

// StopAndCopy at kStopNice where RLIMIT_NICE allows it, then back at the helper's own.
Held StopAndCopyPromptly(pid_t pid, const std::string& maps, ThreadCopy* copy, int64_t* held_us, int64_t* asked_us,
                         std::string* why) {
  errno = 0;
  const int own = ::getpriority(PRIO_PROCESS, 0);
  const bool raised = errno == 0 && own > kStopNice && ::setpriority(PRIO_PROCESS, 0, kStopNice) == 0;
  const Held held = StopAndCopy(pid, maps, copy, held_us, asked_us, why);
  if (raised) ::setpriority(PRIO_PROCESS, 0, own);
  return held;
}

Held StopAndCopy(pid_t pid, const std::string& maps, ThreadCopy* copy, int64_t* held_us, int64_t* asked_us,
                 std::string* why) {
  const auto tid = static_cast<pid_t>(copy->tid);
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
    *why = errno == ESRCH ? "it exited" : std::string("PTRACE_SEIZE: ") + std::strerror(errno);
    return Held::kNotRead;
  }
  int signo = 0;
  const auto asked = Clock::now();
  if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    const int err = errno;
    *why = err == ESRCH ? "it exited" : std::string("PTRACE_INTERRUPT: ") + std::strerror(err);
    if (err == ESRCH) return Held::kNotRead;  // no longer ours to trace
    return ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr) == 0 ? Held::kNotRead : Held::kStuck;
  }
  if (const Stop stop = WaitForStop(copy->tid, &signo, why); stop != Stop::kStopped) {
    // Gone, it is no longer traced; not stopped, it cannot be detached (Held::kStuck).
    return stop == Stop::kExited ? Held::kNotRead : Held::kStuck;
  }
  // Held from here: until now the thread ran, or waited for a CPU as it would have anyway
  // (on a machine whose CPUs its process keeps busy, its turn may be far off).
  const auto stopped = Clock::now();
  *asked_us = Micros(stopped - asked);
  iovec regs{&copy->regs, sizeof copy->regs};
  const bool have_regs = ::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_PRSTATUS), &regs) == 0;
  if (have_regs) {
    const uint64_t sp = StackPointer(copy->regs);
    uint64_t start = 0, end = 0;
    if (MappingOf(maps, sp, &start, &end)) {
      const uint64_t from = std::max(start, sp >= kRedZone ? sp - kRedZone : 0);
      const uint64_t to = std::min<uint64_t>(end, from + kMaxStackCopy);
      copy->stack.resize(to - from);
      copy->stack_at = from;
      if (!ReadLive(pid, from, copy->stack.data(), copy->stack.size())) copy->stack.clear();
    }
  } else {
    *why = std::string("PTRACE_GETREGSET: ") + std::strerror(errno);
  }
  // Whatever signal stopped it goes back with the detach: nothing is lost or added.
  ::ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(signo)));
  *held_us = Micros(Clock::now() - stopped);
  return have_regs ? Held::kCopied : Held::kNotRead;
}

std::string StatOf(pid_t pid, long tid) {
  int err = 0;
  return ReadSmall(TaskDir(pid, tid) + "/stat", 4096, &err);
}
std::string StatusOf(pid_t pid, long tid) {
  int err = 0;
  return ReadSmall(TaskDir(pid, tid) + "/status", 64 << 10, &err);
}

}  // namespace

std::string WhyNoLiveStacks(const std::string& status_text, const std::string& stat_text) {
  if (status_text.empty()) return "it is gone (its /proc status cannot be read)";
  const std::string state = StatusField(status_text, "State");
  const char s = state.find_first_not_of(" \t") == std::string::npos ? '?' : state[state.find_first_not_of(" \t")];
  const long tracer = std::strtol(StatusField(status_text, "TracerPid").c_str(), nullptr, 10);
  if (tracer != 0) {
    return "it is traced by pid " + std::to_string(tracer) +
           " (a debugger or strace): it is not disturbed; detach that and dump again for the stacks";
  }
  if (s == 'Z' || s == 'X') return "it is a zombie: it has exited";
  if (s == 'T' || s == 't') {
    return "it is stopped (state " + std::string(1, s) + "): it is left as whoever stopped it expects";
  }
  // /proc/<pid>/stat field 9, counted after the comm's closing parenthesis: PF_EXITING.
  const size_t close = stat_text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream fields(stat_text.substr(close + 1));
    std::string field;
    unsigned long flags = 0;
    for (int i = 3; i <= 9 && (fields >> field); ++i) {
      if (i == 9) flags = std::strtoul(field.c_str(), nullptr, 10);
    }
    if (flags & 0x4) return "it is exiting";
  }
  return "";
}

void PrintCounts(const proto::StackCounts& counts) {
  std::printf("%ccounts\n%s", kSectionMark, proto::FormatStackCounts(counts).c_str());
}

int LiveStacks(pid_t pid, ElfLookup* lookup, proto::StackCounts* counts) {
  if (std::string why = WhyNoLiveStacks(StatusOf(pid, pid), StatOf(pid, pid)); !why.empty()) {
    std::printf("(none: pid %d %s)\n", pid, Printable(why).c_str());
    return 1;
  }
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);  // each stop is reported to us by SIGCHLD
  Dwfl* dwfl = dwfl_begin(InstallElfLookup(lookup));
  Snapshot snapshot{pid, nullptr};
  static const Dwfl_Thread_Callbacks kCallbacks = {NextThread, GetThread, MemoryRead, SetInitialRegisters, nullptr,
                                                   nullptr};
  bool walkable = dwfl != nullptr;
  if (walkable) {
    const int err = ReportModules(dwfl, pid, lookup->proc_dir);
    walkable = err == 0 && dwfl_report_end(dwfl, nullptr, nullptr) == 0 && dwfl_attach_state(dwfl, nullptr, pid, &kCallbacks, &snapshot);
    if (!walkable) {
      std::printf("(no frames: cannot read the modules of pid %d: %s; registers only)\n", pid,
                  err > 0 ? std::strerror(err) : dwfl_errmsg(-1));
    }
  }
  const std::map<std::string, uint64_t> bases = ModuleBases(lookup->maps);
  std::vector<long> tids = TaskIds(pid);
  // The leader first, as Thread 1: CANN numbers the process's main thread first too.
  if (auto leader = std::find(tids.begin(), tids.end(), pid); leader != tids.end()) std::rotate(tids.begin(), leader, leader + 1);
  counts->threads = static_cast<uint32_t>(tids.size());
  // Every thread, each block bounded (proto::ThreadBlock), up to the section's thread bound.
  const size_t listed = std::min(tids.size(), proto::kMaxStackThreads);
  for (size_t i = 0; i < listed; ++i) {
    proto::ThreadStack thread = ThreadOf(static_cast<int>(i + 1), pid, tids[i]);
    ThreadCopy copy;
    copy.tid = tids[i];
    std::string why = WhyNoLiveStacks(StatusOf(pid, copy.tid), StatOf(pid, copy.tid));
    int64_t held_us = 0, asked_us = 0;
    const Held held =
        why.empty() ? StopAndCopyPromptly(pid, lookup->maps, &copy, &held_us, &asked_us, &why) : Held::kNotRead;
    if (held != Held::kCopied) thread.notes.push_back("no backtrace: " + why);
    if (held == Held::kStuck) {
      std::fputs(proto::ThreadBlock(thread).c_str(), stdout);
      std::fputs(proto::NoteLine("the " + std::to_string(tids.size() - i - 1) +
                                 " threads after it are not read: the dump ends here, which lets this thread go")
                     .c_str(),
                 stdout);
      PrintCounts(*counts);
      std::fflush(stdout);
      std::_Exit(1);  // the kernel detaches a tracer's tracees when it exits
    }
    if (held != Held::kCopied) {
      std::fputs(proto::ThreadBlock(thread).c_str(), stdout);
      continue;
    }
    ++counts->read;
    counts->max_stop_us = static_cast<uint32_t>(std::clamp<int64_t>(std::max<int64_t>(counts->max_stop_us, held_us), 0, UINT32_MAX));
    Walk walk{dwfl, {}, {}};
    snapshot.current = &copy;
    if (!walkable || (dwfl_getthread_frames(dwfl, static_cast<pid_t>(copy.tid), OnFrame, &walk) != 0 && walk.frames.empty())) {
      StackFrame pc;
#if defined(__x86_64__)
      pc.pc = copy.regs.rip;
#else
      pc.pc = copy.regs.pc;
#endif
      pc.activation = true;
      walk.frames = {pc};
      if (walkable) walk.stopped = dwfl_errmsg(-1);
    }
    snapshot.current = nullptr;
    AddFrames(walk, 0, bases, &thread);
    thread.held_us = static_cast<uint64_t>(std::max<int64_t>(held_us, 0));
    thread.asked_us = static_cast<uint64_t>(std::max<int64_t>(asked_us, 0));
    std::fputs(proto::ThreadBlock(thread).c_str(), stdout);
    std::fflush(stdout);  // what is read survives a helper killed at the deadline
  }
  if (tids.size() > listed) {
    std::fputs(proto::NoteLine(std::to_string(tids.size() - listed) + " more threads not read: a report lists at most " +
                               std::to_string(proto::kMaxStackThreads))
                   .c_str(),
               stdout);
  }
  std::fputs(proto::NoteLine("stacks read one thread at a time: " + std::to_string(counts->read) + " of " +
                             std::to_string(tids.size()) + " threads; the longest a thread was held stopped: " +
                             std::to_string(counts->max_stop_us) + " us")
                 .c_str(),
             stdout);
  if (dwfl != nullptr) dwfl_end(dwfl);
  return counts->read > 0 ? 0 : 1;
}

}  // namespace atraced::crash
