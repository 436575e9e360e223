// What the kernel says about a process, read from /proc. Identity never comes from a
// client's payload: the daemon asks here (and SO_PEERCRED) instead. An interface so the
// service can be tested with made-up processes.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/processes/oom_count.h"

namespace atraced {

// The credentials a process runs with now (/proc/<pid>/status), and whether it is
// dumpable: the kernel makes the files under /proc/<pid> (not the directory itself) owned by
// root while it is not (a set-id program, a file with capabilities, a credential change,
// PR_SET_DUMPABLE 0), which is how another process can tell.
struct ProcessCredentials {
  std::array<uint32_t, 4> uids{};  // real, effective, saved, file system
  std::array<uint32_t, 4> gids{};
  bool dumpable = false;
};

struct ProcessFacts {
  int32_t pgid = 0;
  uint64_t start_ticks = 0;  // /proc/<pid>/stat field 22: tells a reused pid apart
  std::string program;       // /proc/<pid>/comm, made safe for a file name
  std::vector<gid_t> groups; // supplementary groups (/proc/<pid>/status Groups:)
  std::optional<ProcessCredentials> creds;  // nullopt: /proc/<pid>/status was not readable
};

// What became of a process the daemon knew (pid + start time), as far as the kernel tells.
struct ProcessEnd {
  bool gone = false;                // it has ended (a zombie, reaped, or its pid reused)
  std::optional<int> wait_status;   // waitpid-style status, read from a zombie; 0 may mean unreadable
};

class ProcessTable {
 public:
  virtual ~ProcessTable() = default;
  // nullopt if the process does not exist (or /proc cannot tell).
  virtual std::optional<ProcessFacts> Lookup(int32_t pid) = 0;
  // Whether the process `pid` that started at `start_ticks` has ended. `pidfd`, if valid,
  // refers to that very process (process_identity.h) and decides: two processes may share a
  // pid and a start time (both forked within one clock tick). The default asks Lookup
  // (gone when absent or when the pid now has another start time).
  virtual ProcessEnd CheckEnded(int32_t pid, uint64_t start_ticks, const UniqueFd& pidfd);
  // /proc/<pid>/cmdline with its NULs as spaces, at most 4096 bytes; nullopt if unreadable.
  virtual std::optional<std::string> CommandLine(int32_t /*pid*/) { return std::nullopt; }
  // The OOM killer's count for the memory cgroup `pid` is in (oom_count.h), read at HELLO.
  virtual OomCount OomKills(int32_t /*pid*/) { return {"", std::nullopt, "this daemon does not read cgroups"}; }
  // The same count again at death, from the file OomKills named (the process is gone).
  virtual OomCount OomKillsIn(const std::string& file) {
    return {file, std::nullopt, "this daemon does not read cgroups"};
  }
  // The CPU time the process `pid` that started at `start_ticks` used so far, user and system
  // (/proc/<pid>/stat utime + stime): the hang watch's busy or blocked. nullopt when it is
  // gone, a zombie, another process now, or unreadable.
  virtual std::optional<std::chrono::milliseconds> CpuTime(int32_t /*pid*/, uint64_t /*start_ticks*/) {
    return std::nullopt;
  }
};

class ProcProcessTable final : public ProcessTable {
 public:
  explicit ProcProcessTable(std::string proc_root = "/proc", std::string cgroup_root = "/sys/fs/cgroup")
      : proc_root_(std::move(proc_root)), cgroup_root_(std::move(cgroup_root)) {}
  std::optional<ProcessFacts> Lookup(int32_t pid) override;
  // Exact where pidfd_open exists: a pidfd polls readable only once every thread of the
  // process has exited (a zombie leader whose threads still run is not gone).
  ProcessEnd CheckEnded(int32_t pid, uint64_t start_ticks, const UniqueFd& pidfd) override;
  std::optional<std::string> CommandLine(int32_t pid) override;
  // The counter file OomCountFile finds for /proc/<pid>/cgroup under cgroup_root.
  OomCount OomKills(int32_t pid) override;
  OomCount OomKillsIn(const std::string& file) override;
  std::optional<std::chrono::milliseconds> CpuTime(int32_t pid, uint64_t start_ticks) override;

 private:
  std::string proc_root_;
  std::string cgroup_root_;
};

// The Uid:, Gid: and Groups: lines of /proc/<pid>/status into `facts` (creds stays nullopt
// without both id lines). Exposed for tests.
void ParseProcStatus(const std::string& status_text, ProcessFacts* facts);

// Parses the text of /proc/<pid>/stat. Exposed for tests: the comm field may contain
// spaces and parentheses, so fields are counted from the last ')'.
std::optional<ProcessFacts> ParseProcStat(const std::string& stat_text);

// The end of a process as /proc/<pid>/stat shows it: field 3 (state, 'Z' for a zombie) and
// field 52 (exit_code: a zombie's status in waitpid's form, shown as 0 to a reader that may
// not ptrace-read the process; absent before Linux 3.5); and fields 14 and 15, the CPU time
// it used so far (utime + stime, in clock ticks).
struct ProcStatEnd {
  char state = 0;
  uint64_t start_ticks = 0;
  std::optional<int> exit_code;
  uint64_t cpu_ticks = 0;
};
std::optional<ProcStatEnd> ParseProcStatEnd(const std::string& stat_text);

}  // namespace atraced
