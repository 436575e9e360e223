// Running a tool of the host (npu-smi, hccn_tool) from atracectl, as the operator: found in
// the operator's PATH, no shell, stdin /dev/null, killed after a timeout, and only the first
// bytes of its output (stdout and stderr together) kept, the rest read and dropped.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace atracectl {

struct BoundedRun {
  bool installed = false;   // false: no such program in PATH (nothing ran)
  std::string not_started;  // why it could not start, though it exists ("" when it ran)
  std::optional<int> exit;  // its exit status, or 128 + the signal; nullopt: it timed out
  bool timed_out = false;   // killed (SIGKILL) at the timeout
  std::string output;       // raw bytes: escape to show
  bool cut = false;         // more than max_bytes were written
};

BoundedRun RunBounded(const std::vector<std::string>& args, std::chrono::milliseconds timeout, size_t max_bytes);

}  // namespace atracectl
