#include "atraced/processes/process_table.h"

#include <dirent.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "atraced/base/unique_fd.h"

#include "atraced/processes/process_identity.h"
#include "atraced/store/names.h"

namespace atraced {
namespace {

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The kernel's answer to "is the process at `base` (/proc/<pid>) dumpable?": the files of a
// task are owned by the process's effective ids while it is, by root otherwise (proc(5)).
// Asked of a file, not of the directory: /proc/<pid> itself (0555) keeps the process's ids
// either way, so a process that called PR_SET_DUMPABLE 0 or exec'd a file with capabilities
// looked dumpable. A thread-group leader that has exited (pthread_exit) has no memory, and
// its files are root's whatever the process is: then its live threads answer.
bool Dumpable(const std::string& base, const ProcessCredentials& creds) {
  auto owned_by_process = [&](const std::string& status) {
    struct stat st {};
    return ::stat(status.c_str(), &st) == 0 && st.st_uid == creds.uids[1] && st.st_gid == creds.gids[1];
  };
  if (owned_by_process(base + "/status")) return true;
  DIR* tasks = ::opendir((base + "/task").c_str());
  if (tasks == nullptr) return false;
  bool dumpable = false;
  int looked = 0;
  while (dirent* e = ::readdir(tasks)) {
    if (e->d_name[0] == '.') continue;
    if (++looked > 64) break;  // threads share one memory: a few live ones answer for all
    if (owned_by_process(base + "/task/" + e->d_name + "/status")) {
      dumpable = true;
      break;
    }
  }
  ::closedir(tasks);
  return dumpable;
}

}  // namespace

std::optional<ProcessFacts> ParseProcStat(const std::string& text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcessFacts f;
  // A comm may hold any byte; file names may not.
  f.program = SanitizeName(text.substr(open + 1, close - open - 1), kMaxProgramName, "unknown");
  std::istringstream rest(text.substr(close + 1));
  // Fields after comm start at field 3 (state). pgrp is field 5, starttime field 22.
  std::string field;
  for (int index = 3; index <= 22 && rest >> field; ++index) {
    try {
      if (index == 5) f.pgid = static_cast<int32_t>(std::stol(field));
      if (index == 22) {
        f.start_ticks = std::stoull(field);
        return f;
      }
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<ProcStatEnd> ParseProcStatEnd(const std::string& text) {
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  ProcStatEnd end;
  std::string field;
  bool started = false;
  for (int index = 3; index <= 52 && rest >> field; ++index) {
    try {
      if (index == 3) end.state = field[0];
      if (index == 14 || index == 15) end.cpu_ticks += std::stoull(field);
      if (index == 22) {
        end.start_ticks = std::stoull(field);
        started = true;
      }
      if (index == 52) end.exit_code = static_cast<int>(std::stol(field));
    } catch (const std::exception&) {
      break;
    }
  }
  if (!started) return std::nullopt;
  return end;
}

void ParseProcStatus(const std::string& text, ProcessFacts* facts) {
  std::istringstream lines(text);
  std::string line;
  ProcessCredentials creds;
  bool have_uids = false, have_gids = false;
  auto four = [](const std::string& rest, std::array<uint32_t, 4>* out) {
    std::istringstream in(rest);
    for (uint32_t& id : *out) {
      long long v = -1;
      if (!(in >> v) || v < 0 || v > UINT32_MAX) return false;
      id = static_cast<uint32_t>(v);
    }
    return true;
  };
  while (std::getline(lines, line)) {
    if (line.rfind("Uid:", 0) == 0) {
      have_uids = four(line.substr(4), &creds.uids);
    } else if (line.rfind("Gid:", 0) == 0) {
      have_gids = four(line.substr(4), &creds.gids);
    } else if (line.rfind("Groups:", 0) == 0) {
      std::istringstream gs(line.substr(7));
      long g;
      while (gs >> g) facts->groups.push_back(static_cast<gid_t>(g));
    }
  }
  if (have_uids && have_gids) facts->creds = creds;
}

ProcessEnd ProcessTable::CheckEnded(int32_t pid, uint64_t start_ticks, const UniqueFd& /*pidfd*/) {
  auto facts = Lookup(pid);
  ProcessEnd end;
  end.gone = !facts || facts->start_ticks != start_ticks;
  return end;
}

ProcessEnd ProcProcessTable::CheckEnded(int32_t pid, uint64_t start_ticks, const UniqueFd& pinned) {
  ProcessEnd end;
  const std::string stat_path = proc_root_ + "/" + std::to_string(pid) + "/stat";
  auto read_end = [&]() -> std::optional<ProcStatEnd> {
    auto text = Slurp(stat_path);
    return text ? ParseProcStatEnd(*text) : std::nullopt;
  };
  if (pinned.valid()) {
    // The process itself: readable once every thread has exited.
    pollfd p{pinned.get(), POLLIN, 0};
    end.gone = ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
    if (!end.gone) return end;
    // Its status, if /proc still shows it as a zombie (not reaped: the pid is still its own).
    auto zombie = pid > 0 ? read_end() : std::nullopt;
    if (zombie && zombie->state == 'Z' && zombie->start_ticks == start_ticks && PidfdAlive(pinned)) {
      end.wait_status = zombie->exit_code;
    }
    return end;
  }
  auto first = pid > 0 ? read_end() : std::nullopt;
  if (!first || first->start_ticks != start_ticks) {  // reaped, or its pid is another process's now
    end.gone = true;
    return end;
  }
#ifdef SYS_pidfd_open
  // The pidfd pins the pid: if /proc agrees on the start time once it is open, it is ours.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd.valid() && errno == ESRCH) {
    end.gone = true;
    return end;
  }
  if (pidfd.valid()) {
    auto again = read_end();
    if (!again || again->start_ticks != start_ticks) {
      end.gone = true;
      return end;
    }
    pollfd p{pidfd.get(), POLLIN, 0};
    end.gone = ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
    if (end.gone && again->state == 'Z') end.wait_status = again->exit_code;
    return end;
  }
#endif
  // No pidfd (an old kernel, a seccomp filter): a zombie or dead task has ended. A zombie
  // leader whose other threads still run is mistaken for an ended process here.
  end.gone = first->state == 'Z' || first->state == 'X';
  if (first->state == 'Z') end.wait_status = first->exit_code;
  return end;
}

std::optional<std::string> ProcProcessTable::CommandLine(int32_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(proc_root_ + "/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& ch : text) {
    if (ch == '\0') ch = ' ';
  }
  return text;
}

OomCount ProcProcessTable::OomKills(int32_t pid) {
  const std::string proc_file = proc_root_ + "/" + std::to_string(pid) + "/cgroup";
  const auto text = pid > 0 ? Slurp(proc_file) : std::nullopt;
  if (!text) return {"", std::nullopt, proc_file + " is not readable"};
  // v2 alone (or unified) is mounted at the root itself; in a v1 or hybrid layout the root
  // holds one directory per hierarchy, and memory is a v1 one.
  const bool v2_at_root = ::access((cgroup_root_ + "/cgroup.controllers").c_str(), F_OK) == 0;
  const auto file = OomCountFile(*text, cgroup_root_, v2_at_root);
  if (!file) return {"", std::nullopt, "no memory cgroup in " + proc_file};
  return OomKillsIn(*file);
}

OomCount ProcProcessTable::OomKillsIn(const std::string& file) {
  if (file.empty()) return {file, std::nullopt, "its memory cgroup was not known"};
  // The root cgroup has no memory.events, nor has a v2 cgroup without the memory controller.
  const auto text = Slurp(file);
  if (!text) return {file, std::nullopt, file + " is not readable"};
  const auto kills = ParseOomKill(*text);
  if (!kills) return {file, std::nullopt, file + " has no oom_kill"};
  return {file, kills, ""};
}

std::optional<std::chrono::milliseconds> ProcProcessTable::CpuTime(int32_t pid, uint64_t start_ticks) {
  static const long kTicksPerSecond = ::sysconf(_SC_CLK_TCK);
  if (pid <= 0 || kTicksPerSecond <= 0) return std::nullopt;
  const auto text = Slurp(proc_root_ + "/" + std::to_string(pid) + "/stat");
  const auto stat = text ? ParseProcStatEnd(*text) : std::nullopt;
  if (!stat || stat->start_ticks != start_ticks || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  return std::chrono::milliseconds(stat->cpu_ticks * 1000 / static_cast<uint64_t>(kTicksPerSecond));
}

std::optional<ProcessFacts> ProcProcessTable::Lookup(int32_t pid) {
  if (pid <= 0) return std::nullopt;
  std::string base = proc_root_ + "/" + std::to_string(pid);
  auto stat = Slurp(base + "/stat");
  if (!stat) return std::nullopt;
  auto facts = ParseProcStat(*stat);
  if (!facts) return std::nullopt;
  if (auto status = Slurp(base + "/status")) ParseProcStatus(*status, &*facts);
  if (facts->creds) facts->creds->dumpable = Dumpable(base, *facts->creds);
  return facts;
}

}  // namespace atraced
