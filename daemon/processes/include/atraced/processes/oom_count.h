// Whether the kernel's OOM killer ended a process, as far as its memory cgroup tells: the
// `oom_kill` counter, read when the process registers (HELLO) and again when it has died
// without GOODBYE. cgroup v2 keeps it in memory.events, v1 in memory.oom_control (Linux
// 4.13+). An increase means the OOM killer killed a process of that cgroup meanwhile:
// almost always this one, which died of SIGKILL at that moment, but a sibling in the same
// cgroup counts as well (the report names the file, so a reader can judge).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace atraced {

struct OomCount {
  std::string file;                // e.g. "/sys/fs/cgroup/app.slice/memory.events"; empty if unknown
  std::optional<uint64_t> kills;   // its oom_kill; nullopt if not readable
  std::string why_not;             // why `kills` is missing, for the report
};

// Where a /proc/<pid>/cgroup text says the counter is, under `cgroup_root`: the v2 entry
// ("0::/path" -> root/path/memory.events) when the v2 hierarchy is mounted at the root
// (`v2_at_root`), else the v1 memory entry ("N:...memory...:/path" ->
// root/memory/path/memory.oom_control). nullopt when neither applies.
std::optional<std::string> OomCountFile(const std::string& proc_cgroup_text, const std::string& cgroup_root,
                                        bool v2_at_root);
// The `oom_kill` value of a memory.events or memory.oom_control text; nullopt without one.
std::optional<uint64_t> ParseOomKill(const std::string& text);

// One phrase for a death report: "killed by the OOM killer (<file> oom_kill went from 0
// to 1)", "not by the OOM killer (<file> oom_kill stayed at 0)", or "cannot tell ... (why)".
std::string DescribeOomKill(const OomCount& at_hello, const OomCount& at_death);
bool OomKilled(const OomCount& at_hello, const OomCount& at_death);

}  // namespace atraced
