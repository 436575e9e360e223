#include "atraced/crash/unwind_helper.h"

#include <dirent.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/fsuid.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <array>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/processes/crash_inspector.h"
#include "atraced/processes/process_table.h"
#include "atraced/crash/live_stacks.h"
#include "atraced/crash/stack_format.h"
#include "elf_lookup.h"
#include "unwind_walk.h"

namespace atraced::crash {
namespace {

constexpr size_t kMaxMapsBytes = 1 << 20;     // a huge address space still gives a bounded report
constexpr size_t kMaxThreads = 1024;          // listed
constexpr size_t kMaxGroups = 1 << 16;        // NGROUPS_MAX
// The helper's own address space plus this much: libdw maps every image and debug file it
// reads (each at most kMaxElfFileBytes, and only those of the modules on the stacks) and
// keeps its symbol tables and CFI on the heap. 1 GiB holds four of the largest files or a
// heap far beyond any real unwind; compressed sections are never inflated, so nothing honest
// comes close. Relative to what is mapped at the drop, so a sanitizer's shadow fits too.
constexpr rlim_t kAddressSpaceHeadroom = rlim_t{1} << 30;
// CPU seconds: the daemon's deadline (2 s by default) kills it sooner; this bounds a helper
// whose deadline was set long, or whose parent died.
constexpr rlim_t kCpuSeconds = 5;

enum class Mode { kFactsOnly, kUnwind, kAllThreads, kLive };



std::vector<unsigned long> Numbers(const std::string& text) {
  std::vector<unsigned long> out;
  const char* p = text.c_str();
  for (;;) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || errno != 0) break;
    out.push_back(v);
    p = end;
  }
  return out;
}

// What the helper needs of /proc/PID/status: the ids and groups as the daemon reads them
// (ParseProcStatus, process_table.h), and the permitted capabilities.
struct TargetCredentials {
  std::array<uint32_t, 4> uids{}, gids{};  // real, effective, saved, file system
  std::vector<gid_t> groups;
  uint64_t permitted = 0;  // CapPrm
};

bool ReadCredentials(pid_t pid, TargetCredentials* out, std::string* why) {
  int err = 0;
  const std::string path = "/proc/" + std::to_string(pid) + "/status";
  const std::string status = ReadSmall(path, 64 << 10, &err);
  if (err != 0) {
    *why = "cannot read " + path + ": " + std::strerror(err);
    return false;
  }
  ProcessFacts facts;
  ParseProcStatus(status, &facts);
  const std::string cap = StatusField(status, "CapPrm");
  if (!facts.creds || cap.empty()) {
    *why = "cannot parse " + path;
    return false;
  }
  out->uids = facts.creds->uids;
  out->gids = facts.creds->gids;
  out->groups = std::move(facts.groups);
  if (out->groups.size() > kMaxGroups) out->groups.resize(kMaxGroups);
  out->permitted = std::strtoull(cap.c_str(), nullptr, 16);
  return true;
}

std::string Join(const std::array<uint32_t, 4>& v) {
  std::string out;
  for (uint32_t x : v) out += (out.empty() ? "" : " ") + std::to_string(x);
  return out;
}

bool GetCapabilities(uint64_t* effective, uint64_t* permitted) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  *effective = data[0].effective | (uint64_t{data[1].effective} << 32);
  *permitted = data[0].permitted | (uint64_t{data[1].permitted} << 32);
  return true;
}

bool SetCapabilities(uint64_t keep) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  for (int i = 0; i < 2; ++i) {
    data[i].effective = data[i].permitted = static_cast<uint32_t>(keep >> (32 * i));
    data[i].inheritable = 0;
  }
  return ::syscall(SYS_capset, &header, data) == 0;
}

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Becomes `t.uid`/`t.gid` with the process's groups (a root target keeps only the
// capabilities both it and the daemon have), then checks it worked and limits itself.
// Empty on success, else why not.
std::string BecomeTheCrashingUser(const CrashTarget& t, const TargetCredentials& process) {
  uint64_t effective = 0, permitted = 0;
  if (!GetCapabilities(&effective, &permitted)) return Errno("capget");
  const bool dropped = ::geteuid() == 0;
  if (!dropped) {
    uid_t r = 0, e = 0, s = 0;
    ::getresuid(&r, &e, &s);
    if (r != t.uid || e != t.uid || s != t.uid) {
      return "this daemon runs as uid " + std::to_string(e) + ", not root: it inspects only processes of its own uid, not uid " +
             std::to_string(t.uid);
    }
    if (permitted != 0 && !SetCapabilities(0)) return Errno("dropping capabilities");
  } else {
    if (::setgroups(process.groups.size(), process.groups.data()) != 0) {
      return Errno("cannot take the process's groups (setgroups needs CAP_SETGID)");
    }
    if (::setresgid(t.gid, t.gid, t.gid) != 0) return Errno("cannot become gid (setresgid needs CAP_SETGID)");
    if (::setresuid(t.uid, t.uid, t.uid) != 0) return Errno("cannot become uid (setresuid needs CAP_SETUID)");
    if (t.uid == 0 && !SetCapabilities(permitted & process.permitted)) return Errno("cannot limit capabilities");
  }
  uid_t ru = 0, eu = 0, su = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  ::getresuid(&ru, &eu, &su);
  ::getresgid(&rg, &eg, &sg);
  if (ru != t.uid || eu != t.uid || su != t.uid || ::setfsuid(static_cast<uid_t>(-1)) != static_cast<int>(t.uid)) {
    return "did not become uid " + std::to_string(t.uid);
  }
  if (dropped && (rg != t.gid || eg != t.gid || sg != t.gid)) {
    return "did not become gid " + std::to_string(t.gid);
  }
  if (!GetCapabilities(&effective, &permitted)) return Errno("capget");
  if (t.uid != 0) {
    // Nothing may lead back: no uid 0 of any kind, no capability left.
    if (::setresuid(static_cast<uid_t>(-1), 0, static_cast<uid_t>(-1)) == 0 || ::setuid(0) == 0) {
      return "it could become root again";  // nothing was read; the caller refuses and exits
    }
    if (effective != 0 || permitted != 0) return "capabilities remain after the uid change";
    if (t.gid != 0 && ::setresgid(static_cast<gid_t>(-1), 0, static_cast<gid_t>(-1)) == 0) return "it could become gid 0 again";
  } else if ((permitted & ~process.permitted) != 0) {
    return "holds capabilities the process does not";
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("PR_SET_NO_NEW_PRIVS");
  int err = 0;
  const unsigned long mapped_kib = std::strtoul(StatusField(ReadSmall("/proc/self/status", 64 << 10, &err), "VmSize").c_str(), nullptr, 10);
  const rlimit as{mapped_kib * 1024 + kAddressSpaceHeadroom, mapped_kib * 1024 + kAddressSpaceHeadroom};
  const rlimit cpu{kCpuSeconds, kCpuSeconds + 1};  // SIGXCPU, then SIGKILL
  const rlimit none{0, 0};
  if (mapped_kib == 0 || ::setrlimit(RLIMIT_AS, &as) != 0) return Errno("RLIMIT_AS");
  if (::setrlimit(RLIMIT_CPU, &cpu) != 0) return Errno("RLIMIT_CPU");
  if (::setrlimit(RLIMIT_CORE, &none) != 0) return Errno("RLIMIT_CORE");
  if (::setrlimit(RLIMIT_FSIZE, &none) != 0) return Errno("RLIMIT_FSIZE");  // it writes only to its pipe
  return {};
}

// Every section says why when the process is not inspected at all.
int Refuse(const std::string& why) {
  const std::string line = Printable(why);
  std::printf("%cthreads\n(not listed: %s)\n", kSectionMark, line.c_str());
  std::printf("%cmaps\n(not read: %s)\n", kSectionMark, line.c_str());
  std::printf("%cbacktrace\n(none: %s)\n", kSectionMark, line.c_str());
  std::fflush(stdout);
  return 1;
}


long InnerTid(pid_t pid, long tid) {
  int err = 0;
  const auto ns = Numbers(StatusField(
      ReadSmall("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status", 64 << 10, &err), "NSpid"));
  return ns.empty() ? 0 : static_cast<long>(ns.back());
}

// The thread of `pid` that calls itself `inner` in its own pid namespace; 0 if none.
long HostTid(pid_t pid, long inner, const std::vector<long>& tids) {
  if (std::binary_search(tids.begin(), tids.end(), inner) && InnerTid(pid, inner) == inner) return inner;  // no pid namespace
  for (long t : tids) {
    if (InnerTid(pid, t) == inner) return t;
  }
  return 0;
}

void PrintThreads(pid_t pid, const std::vector<long>& tids) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task/";
  for (size_t i = 0; i < tids.size() && i < kMaxThreads; ++i) {
    int err = 0;
    std::string comm = ReadSmall(dir + std::to_string(tids[i]) + "/comm", 64, &err);
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    std::string line = std::to_string(tids[i]) + " " + (err ? "(comm unreadable)" : Printable(comm));
    if (const long inner = InnerTid(pid, tids[i]); inner != 0 && inner != tids[i]) {
      line += " (tid " + std::to_string(inner) + " in its pid namespace)";
    }
    std::printf("%s\n", line.c_str());
  }
  if (tids.empty()) std::printf("(not listed: no thread of pid %d is visible)\n", pid);
  if (tids.size() > kMaxThreads) std::printf("(%zu more not listed)\n", tids.size() - kMaxThreads);
}






// The other threads, after the crashing one (config crash-all-threads).
struct Others {
  Dwfl* dwfl = nullptr;
  pid_t pid = 0;
  pid_t crashing = 0;
  const std::map<std::string, uint64_t>* bases = nullptr;
  int number = 1;
};

int OnThread(Dwfl_Thread* thread, void* arg) {
  Others* others = static_cast<Others*>(arg);
  const pid_t tid = dwfl_thread_tid(thread);
  if (tid == others->crashing) return DWARF_CB_OK;
  Walk walk{others->dwfl, {}, {}};
  if (dwfl_thread_getframes(thread, OnFrame, &walk) != 0 && walk.frames.empty()) {
    proto::ThreadStack t = ThreadOf(++others->number, others->pid, tid);
    t.notes.push_back(std::string("no backtrace: ") + dwfl_errmsg(-1));
    std::fputs(proto::ThreadBlock(t).c_str(), stdout);
    return DWARF_CB_OK;
  }
  PrintStack(++others->number, others->pid, tid, walk, 0, *others->bases);
  return DWARF_CB_OK;
}



int Unwind(pid_t pid, pid_t tid, bool all_threads, ElfLookup* lookup) {
  Dwfl* dwfl = dwfl_begin(InstallElfLookup(lookup));
  if (dwfl == nullptr) {
    std::printf("(no backtrace: libdwfl: %s)\n", dwfl_errmsg(-1));
    return 1;
  }
  int rc = 1;
  if (int err = ReportModules(dwfl, pid, lookup->proc_dir); err != 0 || dwfl_report_end(dwfl, nullptr, nullptr) != 0) {
    std::printf("(no backtrace: cannot read the modules of pid %d: %s)\n", pid,
                err > 0 ? std::strerror(err) : dwfl_errmsg(-1));
  } else if (int attach_err = dwfl_linux_proc_attach(dwfl, pid, false); attach_err != 0) {
    std::printf("(no backtrace: cannot attach to pid %d: %s)\n", pid, attach_err > 0 ? std::strerror(attach_err) : dwfl_errmsg(-1));
  } else {
    const std::map<std::string, uint64_t> bases = ModuleBases(lookup->maps);
    Walk walk{dwfl, {}, {}};
    // Attaching (ptrace) happens here, thread by thread; a refusal shows as its error.
    if (dwfl_getthread_frames(dwfl, tid, OnFrame, &walk) != 0 && walk.frames.empty()) {
      const char* why = dwfl_errmsg(-1);
      std::printf("(no backtrace: unwinding thread %d of pid %d failed: %s)\n", tid, pid, why ? why : "unknown error");
      if (why != nullptr && std::strstr(why, "not permitted") != nullptr) {
        std::printf("(ptrace was refused: the process made itself not dumpable, or Yama ptrace_scope=1 and it did not "
                    "name the daemon with PR_SET_PTRACER; ptrace_scope=3 refuses everyone)\n");
      }
    } else {
      // The crashing thread's frames start where it faulted: the library's handler and the
      // signal trampoline above it are ours, not the application's (CANN's #0 is the fault).
      const size_t first = FaultingFrame(walk.frames);
      if (first > 0) {
        std::printf("(%zu frames of libascend_trace's signal handler above the interrupted frame are not listed)\n", first);
      }
      PrintStack(1, pid, tid, walk, first, bases);
      rc = 0;
    }
    if (all_threads) {
      Others others{dwfl, pid, tid, &bases, 1};
      dwfl_getthreads(dwfl, OnThread, &others);
    }
  }
  dwfl_end(dwfl);  // detaches: the process goes on to re-raise
  return rc;
}

// The credentials the process was read with, and the helper's peak memory.
void PrintHelperLine() {
  uint64_t effective = 0, permitted = 0;
  GetCapabilities(&effective, &permitted);
  char caps[64] = "none";
  if (effective != 0 || permitted != 0) {
    std::snprintf(caps, sizeof caps, "effective %#" PRIx64 " permitted %#" PRIx64, effective, permitted);
  }
  int err = 0;
  const std::string peak = StatusField(ReadSmall("/proc/self/status", 64 << 10, &err), "VmHWM");
  std::printf("(inspected as uid %u gid %u with %d supplementary groups, capabilities %s, no_new_privs %d; "
              "helper peak memory %lu KiB)\n",
              ::getuid(), ::getgid(), ::getgroups(0, nullptr), caps, ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
              std::strtoul(peak.c_str(), nullptr, 10));
}

int Inspect(const CrashTarget& t, Mode mode) {
  TargetCredentials process;
  std::string why;
  if (!ReadCredentials(t.pid, &process, &why)) return Refuse(why);
  const bool plain = std::all_of(process.uids.begin(), process.uids.end(), [&](uint32_t u) { return u == t.uid; }) &&
                     std::all_of(process.gids.begin(), process.gids.end(), [&](uint32_t g) { return g == t.gid; });
  if (!plain) {
    return Refuse("pid " + std::to_string(t.pid) + " is not plainly uid " + std::to_string(t.uid) + " gid " +
                  std::to_string(t.gid) + " (uids " + Join(process.uids) + ", gids " + Join(process.gids) +
                  "): a setuid or setgid process, or another user's, is not inspected");
  }
  if (mode == Mode::kLive && ::geteuid() == 0) {
    // While root: the user the helper becomes may then raise its priority to kStopNice, which
    // live_stacks.cc does only while a thread of the process is held stopped.
    const rlimit nice{static_cast<rlim_t>(20 - kStopNice), static_cast<rlim_t>(20 - kStopNice)};
    ::setrlimit(RLIMIT_NICE, &nice);
  }
  if (std::string failed = BecomeTheCrashingUser(t, process); !failed.empty()) {
    return Refuse("not inspected: the helper could not become the crashing user: " + failed);
  }

  // From here on, as the crashing user: the kernel decides what may be read. Its root and
  // its maps both need ptrace read access (its root the stricter check: a root tracer without
  // CAP_SYS_PTRACE may read the maps of a process with more capabilities, not its root).
  auto refused = [&](int err) {
    return Refuse("the kernel refused uid " + std::to_string(t.uid) + " access to pid " + std::to_string(t.pid) +
                  " (it is not dumpable, or has capabilities the inspector has not): " + std::strerror(err));
  };
  // The process's memory, root and maps are read through the crashing thread's own /proc
  // directory: a thread-group leader that has called pthread_exit is a zombie with none of
  // them (the kernel refuses /proc/<tgid>/maps), while its threads share them all.
  const std::vector<long> tids = TaskIds(t.pid);
  // A live dump names no thread: any of the process's own tasks shows its memory and maps.
  const long host_tid = mode == Mode::kLive ? (tids.empty() ? 0 : t.pid) : HostTid(t.pid, t.tid, tids);
  const std::string proc_dir = host_tid != 0 ? TaskDir(t.pid, host_tid) : "/proc/" + std::to_string(t.pid);
  UniqueFd root(::open((proc_dir + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid() && (errno == EACCES || errno == EPERM)) return refused(errno);
  int err = 0;
  const std::string maps_path = proc_dir + "/maps";
  std::string maps = ReadSmall(maps_path, kMaxMapsBytes, &err);
  if (err == EACCES || err == EPERM) return refused(err);
  if (err != 0) return Refuse("cannot read " + maps_path + ": " + std::strerror(err));
  std::printf("%cthreads\n", kSectionMark);
  PrintThreads(t.pid, tids);
  std::printf("%cmaps\n%s", kSectionMark, Printable(maps, true).c_str());
  if (maps.size() >= kMaxMapsBytes) std::printf("\n(cut at %zu bytes)\n", kMaxMapsBytes);
  std::printf("%cbacktrace\n", kSectionMark);
  int rc = 0;
  if (host_tid == 0) {
    std::printf("(none: thread %d is not a thread of pid %d)\n", t.tid, t.pid);
    rc = 1;
  } else if (mode == Mode::kFactsOnly) {
    std::printf("(none: no time to unwind)\n");  // the caller says why
  } else {
    std::fflush(stdout);  // what is known so far survives a helper killed while unwinding
    ElfLookup lookup;
    lookup.pid = t.pid;
    lookup.proc_dir = proc_dir;
    lookup.maps = std::move(maps);
    lookup.root_fd = root.get();
    if (!root.valid()) lookup.notes.push_back("(no file of the process opened by path: its root is not open)");
    proto::StackCounts counts;
    rc = mode == Mode::kLive ? LiveStacks(t.pid, &lookup, &counts)
                             : Unwind(t.pid, static_cast<pid_t>(host_tid), mode == Mode::kAllThreads, &lookup);
    for (const auto& note : lookup.notes) std::printf("%s\n", note.c_str());
    PrintHelperLine();
    if (mode == Mode::kLive) PrintCounts(counts);
  }
  std::fflush(stdout);
  return rc;
}

bool ParseId(const char* text, long max, long* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < 0 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

int UnwindHelperMain(int argc, const char* const* argv) {
  long pid = 0, tid = 0, uid = 0, gid = 0;
  Mode mode = Mode::kUnwind;
  bool ok = argc == 7 && std::strcmp(argv[1], kUnwindHelperFlag) == 0 && ParseId(argv[2], INT32_MAX, &pid) && pid > 0 &&
            ParseId(argv[3], INT32_MAX, &tid) && tid > 0 && ParseId(argv[4], UINT32_MAX - 1L, &uid) &&
            ParseId(argv[5], UINT32_MAX - 1L, &gid);
  if (ok && std::strcmp(argv[6], kFactsOnlyArg) == 0) {
    mode = Mode::kFactsOnly;
  } else if (ok && std::strcmp(argv[6], kAllThreadsArg) == 0) {
    mode = Mode::kAllThreads;
  } else if (ok && std::strcmp(argv[6], kLiveArg) == 0) {
    mode = Mode::kLive;
  } else if (!ok || std::strcmp(argv[6], kUnwindArg) != 0) {
    std::fprintf(stderr, "usage: atraced %s PID TID UID GID %s|%s|%s|%s (run by atraced itself)\n", kUnwindHelperFlag,
                 kFactsOnlyArg, kUnwindArg, kAllThreadsArg, kLiveArg);
    return 2;
  }
  return Inspect({static_cast<pid_t>(pid), static_cast<pid_t>(tid), static_cast<uid_t>(uid), static_cast<gid_t>(gid)}, mode);
}

}  // namespace atraced::crash
