// What the kernel says about a process, read from /proc. Identity never comes from a
// client's payload: the daemon asks here (and SO_PEERCRED) instead. An interface so the
// service can be tested with made-up processes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace atraced {

struct ProcessFacts {
  int32_t pgid = 0;
  uint64_t start_ticks = 0;  // /proc/<pid>/stat field 22: tells a reused pid apart
  std::string program;       // /proc/<pid>/comm, made safe for a file name
  std::vector<gid_t> groups; // supplementary groups (/proc/<pid>/status Groups:)
};

class ProcessTable {
 public:
  virtual ~ProcessTable() = default;
  // nullopt if the process does not exist (or /proc cannot tell).
  virtual std::optional<ProcessFacts> Lookup(int32_t pid) = 0;
};

class ProcProcessTable final : public ProcessTable {
 public:
  explicit ProcProcessTable(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  std::optional<ProcessFacts> Lookup(int32_t pid) override;

 private:
  std::string proc_root_;
};

// Parses the text of /proc/<pid>/stat. Exposed for tests: the comm field may contain
// spaces and parentheses, so fields are counted from the last ')'.
std::optional<ProcessFacts> ParseProcStat(const std::string& stat_text);

}  // namespace atraced
