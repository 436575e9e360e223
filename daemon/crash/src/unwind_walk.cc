#include "unwind_walk.h"

#include <dirent.h>
#include <dwarf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "atraced/base/unique_fd.h"
#include "elf_lookup.h"

namespace atraced::crash {
namespace {

// "file.c:12" of `address` in `module`, or "" where its debug info does not say. libdwfl
// finds the compilation unit through .debug_aranges, which clang does not emit and Debian
// 12's elfutils (0.188) does not synthesize: then the units are searched by their ranges,
// a bounded number of them.
std::string SourceLine(Dwfl_Module* module, Dwarf_Addr address) {
  constexpr int kMaxUnitsSearched = 4096;
  const char* file = nullptr;
  int line = 0;
  if (Dwfl_Line* where = dwfl_module_getsrc(module, address)) {
    file = dwfl_lineinfo(where, nullptr, &line, nullptr, nullptr, nullptr);
  } else {
    Dwarf_Addr bias = 0;
    Dwarf_Die* unit = nullptr;
    for (int searched = 0; searched < kMaxUnitsSearched && (unit = dwfl_module_nextcu(module, unit, &bias)); ++searched) {
      if (dwarf_haspc(unit, address - bias) <= 0) continue;
      if (Dwarf_Line* in_unit = dwarf_getsrc_die(unit, address - bias)) {
        file = dwarf_linesrc(in_unit, nullptr, nullptr);
        if (file != nullptr && dwarf_lineno(in_unit, &line) != 0) file = nullptr;
      }
      break;
    }
  }
  if (file == nullptr) return "";
  const char* slash = std::strrchr(file, '/');
  return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}

}  // namespace

// Up to `limit` bytes of a /proc file; empty with `error` set when unreadable.
std::string ReadSmall(const std::string& path, size_t limit, int* error) {
  *error = 0;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    *error = errno;
    return {};
  }
  std::string out;
  char buf[8192];
  while (out.size() < limit) {
    const ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, limit - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = errno;
      return {};
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// The value of the "Key:" line of a /proc status file, without the key; empty if absent.
std::string StatusField(const std::string& status, const char* key) {
  const std::string k = std::string("\n") + key + ":";
  size_t at = ("\n" + status).find(k);
  if (at == std::string::npos) return {};
  at += k.size() - 1;  // in `status`, just past the colon
  const size_t end = status.find('\n', at);
  return status.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::vector<long> TaskIds(pid_t pid) {
  std::vector<long> tids;
  DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (d == nullptr) return tids;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long t = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && t > 0 && tids.size() < kMaxTasksSearched) tids.push_back(t);
  }
  ::closedir(d);
  std::sort(tids.begin(), tids.end());
  return tids;
}

// One frame: its pc, whether the pc is exact, and its module, symbol and source line.
int OnFrame(Dwfl_Frame* state, void* arg) {
  Walk* walk = static_cast<Walk*>(arg);
  StackFrame f;
  if (!dwfl_frame_pc(state, &f.pc, &f.activation)) {
    walk->stopped = std::string("no pc: ") + dwfl_errmsg(-1);
    return DWARF_CB_ABORT;
  }
  // A return address points after the call: look up the call itself, report the pc.
  const Dwarf_Addr lookup = f.activation ? f.pc : f.pc - 1;
  if (Dwfl_Module* module = dwfl_addrmodule(walk->dwfl, lookup); module != nullptr) {
    if (const char* name = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr)) {
      f.module = name;
    }
    GElf_Off offset = 0;
    GElf_Sym sym;
    if (const char* function = dwfl_module_addrinfo(module, lookup, &offset, &sym, nullptr, nullptr, nullptr)) {
      char off[32];
      std::snprintf(off, sizeof off, "+0x%" PRIx64, static_cast<uint64_t>(offset + (f.pc - lookup)));
      f.symbol = function + std::string(off);
    }
    f.source = SourceLine(module, lookup);
  }
  walk->frames.push_back(std::move(f));
  return walk->frames.size() >= static_cast<size_t>(kMaxFrames) ? DWARF_CB_ABORT : DWARF_CB_OK;
}

std::string ThreadName(pid_t pid, long tid) {
  int err = 0;
  std::string comm = ReadSmall("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm", 64, &err);
  if (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return err ? "(comm unreadable)" : comm;
}

proto::ThreadStack ThreadOf(int number, pid_t pid, long tid) {
  proto::ThreadStack t;
  t.number = static_cast<uint32_t>(number);
  t.tid = tid;
  t.name = ThreadName(pid, tid);
  return t;
}

void AddFrames(const Walk& walk, size_t first, const std::map<std::string, uint64_t>& bases, proto::ThreadStack* t) {
  for (size_t i = first; i < walk.frames.size(); ++i) {
    t->frames.push_back(FrameText(static_cast<uint32_t>(i - first), walk.frames[i], bases));
  }
  if (!walk.stopped.empty()) t->notes.push_back("the walk stopped: " + walk.stopped);
}

void PrintStack(int number, pid_t pid, long tid, const Walk& walk, size_t first,
                const std::map<std::string, uint64_t>& bases) {
  proto::ThreadStack t = ThreadOf(number, pid, tid);
  AddFrames(walk, first, bases, &t);
  std::fputs(proto::ThreadBlock(t).c_str(), stdout);
}

std::string TaskDir(pid_t pid, long tid) { return "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid); }

// Reports the process's modules to `dwfl`: an errno, -1 for libdwfl's own error, or 0.
// dwfl_linux_proc_report reads /proc/<pid>/maps (and auxv, for the vDSO); when the leader
// has exited, those are refused, and the crashing thread's maps (`proc_dir`) say the same.
int ReportModules(Dwfl* dwfl, pid_t pid, const std::string& proc_dir) {
  const int err = dwfl_linux_proc_report(dwfl, pid);
  if (err == 0 || proc_dir == "/proc/" + std::to_string(pid)) return err;
  dwfl_report_begin(dwfl);  // forget what the failed report left
  FILE* maps = std::fopen((proc_dir + "/maps").c_str(), "re");
  if (maps == nullptr) return errno;
  const int task_err = dwfl_linux_proc_maps_report(dwfl, maps);
  std::fclose(maps);
  return task_err;
}

}  // namespace atraced::crash
