#include "atraced/processes/oom_count.h"

#include <sstream>

namespace atraced {

std::optional<std::string> OomCountFile(const std::string& text, const std::string& cgroup_root, bool v2_at_root) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-id:controllers:path"; the path may itself contain ':'.
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    std::string path = line.substr(second + 1);
    if (path == "/") path.clear();
    if (id == "0" && controllers == ",," && v2_at_root) return cgroup_root + path + "/memory.events";
    if (id != "0" && controllers.find(",memory,") != std::string::npos) {
      return cgroup_root + "/memory" + path + "/memory.oom_control";
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ParseOomKill(const std::string& text) {
  std::istringstream lines(text);
  std::string key;
  uint64_t value = 0;
  while (lines >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return std::nullopt;
}

bool OomKilled(const OomCount& at_hello, const OomCount& at_death) {
  return at_hello.kills && at_death.kills && *at_death.kills > *at_hello.kills;
}

std::string DescribeOomKill(const OomCount& at_hello, const OomCount& at_death) {
  if (!at_hello.kills || !at_death.kills) {
    return "cannot tell whether the OOM killer did it (" + (!at_hello.kills ? at_hello.why_not : at_death.why_not) + ")";
  }
  const std::string before = std::to_string(*at_hello.kills);
  if (OomKilled(at_hello, at_death)) {
    return "killed by the OOM killer (" + at_death.file + " oom_kill went from " + before + " to " +
           std::to_string(*at_death.kills) + ")";
  }
  return "not by the OOM killer (" + at_death.file + " oom_kill stayed at " + before + ")";
}

}  // namespace atraced
