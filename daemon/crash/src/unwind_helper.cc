#include "atraced/crash/unwind_helper.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <inttypes.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace atraced::crash {
namespace {

constexpr int kMaxFrames = 128;  // a runaway (recursive) stack still gives a bounded report

struct Walk {
  Dwfl* dwfl = nullptr;
  int frames = 0;
};

// One line per frame: number, pc, function+offset (or ??), module path (or ??).
int OnFrame(Dwfl_Frame* state, void* arg) {
  Walk* walk = static_cast<Walk*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation)) {
    std::printf("#%-3d (no pc: %s)\n", walk->frames, dwfl_errmsg(-1));
    return DWARF_CB_ABORT;
  }
  // A return address points after the call: look up the call itself, report the pc.
  const Dwarf_Addr lookup = activation ? pc : pc - 1;
  Dwfl_Module* module = dwfl_addrmodule(walk->dwfl, lookup);
  const char* module_name = nullptr;
  const char* function = nullptr;
  GElf_Off offset = 0;
  GElf_Sym sym;
  if (module != nullptr) {
    module_name = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    function = dwfl_module_addrinfo(module, lookup, &offset, &sym, nullptr, nullptr, nullptr);
  }
  if (function != nullptr) {
    std::printf("#%-3d 0x%016" PRIx64 " %s+0x%" PRIx64 " %s\n", walk->frames, static_cast<uint64_t>(pc), function,
                static_cast<uint64_t>(offset + (pc - lookup)), module_name ? module_name : "??");
  } else {
    std::printf("#%-3d 0x%016" PRIx64 " ?? %s\n", walk->frames, static_cast<uint64_t>(pc),
                module_name ? module_name : "??");
  }
  return ++walk->frames >= kMaxFrames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

// The other threads, after the crashing one (config crash-all-threads).
struct Others {
  Dwfl* dwfl = nullptr;
  pid_t crashing = 0;
};

int OnThread(Dwfl_Thread* thread, void* arg) {
  Others* others = static_cast<Others*>(arg);
  const pid_t tid = dwfl_thread_tid(thread);
  if (tid == others->crashing) return DWARF_CB_OK;
  std::printf("\nthread %d:\n", tid);
  Walk walk{others->dwfl, 0};
  if (dwfl_thread_getframes(thread, OnFrame, &walk) != 0 && walk.frames == 0) {
    std::printf("(no backtrace: %s)\n", dwfl_errmsg(-1));
  }
  return DWARF_CB_OK;
}

int Unwind(pid_t pid, pid_t tid, bool all_threads) {
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                           &debuginfo_path};
  Dwfl* dwfl = dwfl_begin(&callbacks);
  if (dwfl == nullptr) {
    std::printf("(no backtrace: libdwfl: %s)\n", dwfl_errmsg(-1));
    return 1;
  }
  int rc = 1;
  // dwfl_linux_proc_report returns an errno (reading /proc/<pid>/maps), or -1 for its own error.
  if (int err = dwfl_linux_proc_report(dwfl, pid); err != 0 || dwfl_report_end(dwfl, nullptr, nullptr) != 0) {
    std::printf("(no backtrace: cannot read the modules of pid %d: %s)\n", pid,
                err > 0 ? std::strerror(err) : dwfl_errmsg(-1));
  } else if (int attach_err = dwfl_linux_proc_attach(dwfl, pid, false); attach_err != 0) {
    std::printf("(no backtrace: cannot attach to pid %d: %s)\n", pid, attach_err > 0 ? std::strerror(attach_err) : dwfl_errmsg(-1));
  } else {
    Walk walk{dwfl, 0};
    // Attaching (ptrace) happens here, thread by thread; a refusal shows as its error.
    if (dwfl_getthread_frames(dwfl, tid, OnFrame, &walk) != 0 && walk.frames == 0) {
      const char* why = dwfl_errmsg(-1);
      std::printf("(no backtrace: unwinding thread %d of pid %d failed: %s)\n", tid, pid, why ? why : "unknown error");
      if (why != nullptr && std::strstr(why, "not permitted") != nullptr) {
        std::printf("(ptrace was refused: the daemon needs root or CAP_SYS_PTRACE, and under Yama ptrace_scope=1 "
                    "the process must name it with PR_SET_PTRACER; ptrace_scope=3 refuses everyone)\n");
      }
    } else {
      rc = 0;
    }
    if (all_threads) {
      Others others{dwfl, tid};
      dwfl_getthreads(dwfl, OnThread, &others);
    }
  }
  dwfl_end(dwfl);  // detaches: the process goes on to re-raise
  std::fflush(stdout);
  return rc;
}

bool ParsePid(const char* text, pid_t* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0 || v > INT32_MAX) return false;
  *out = static_cast<pid_t>(v);
  return true;
}

}  // namespace

int UnwindHelperMain(int argc, const char* const* argv) {
  pid_t pid = 0, tid = 0;
  const bool all_threads = argc == 5 && std::strcmp(argv[4], kAllThreadsArg) == 0;
  if ((argc != 4 && !all_threads) || std::strcmp(argv[1], kUnwindHelperFlag) != 0 || !ParsePid(argv[2], &pid) ||
      !ParsePid(argv[3], &tid)) {
    std::fprintf(stderr, "usage: atraced %s PID TID [%s] (run by atraced itself)\n", kUnwindHelperFlag, kAllThreadsArg);
    return 2;
  }
  return Unwind(pid, tid, all_threads);
}

}  // namespace atraced::crash
