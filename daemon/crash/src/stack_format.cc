#include "atraced/crash/stack_format.h"

#include <cstdlib>
#include <sstream>

namespace atraced::crash {

std::map<std::string, uint64_t> ModuleBases(const std::string& maps) {
  std::map<std::string, uint64_t> bases;
  std::istringstream in(maps);
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode path: the path is the rest after the fifth field.
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode;
    if (!(fields >> range >> perms >> offset >> dev >> inode)) continue;
    std::string path;
    std::getline(fields >> std::ws, path);
    if (path.empty() || path.front() != '/') continue;  // anonymous, [heap], [stack], [vdso]
    char* end = nullptr;
    if (std::strtoull(offset.c_str(), &end, 16) != 0 || *end != '\0') continue;
    const uint64_t start = std::strtoull(range.c_str(), &end, 16);
    if (end == range.c_str() || *end != '-') continue;
    auto [it, inserted] = bases.emplace(path, start);
    if (!inserted && start < it->second) it->second = start;
  }
  return bases;
}

size_t FaultingFrame(const std::vector<StackFrame>& frames) {
  size_t i = 1;
  while (i < frames.size() && !frames[i].activation) ++i;
  if (i >= frames.size()) return 0;
  while (i + 1 < frames.size() && frames[i + 1].activation) ++i;
  return i;
}

proto::StackFrameText FrameText(uint32_t number, const StackFrame& frame, const std::map<std::string, uint64_t>& bases) {
  const auto base = bases.find(frame.module);
  return {number, frame.pc, base == bases.end() ? uint64_t{0} : base->second, frame.module, frame.symbol, frame.source};
}

}  // namespace atraced::crash
