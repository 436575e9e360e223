#include "files/stack_report.h"

#include <cstdio>

namespace atracectl {
namespace {

constexpr size_t kMaxFrameName = 256;

namespace proto = atraced::proto;

size_t FrameCost(const std::string& name, const std::string& source) {
  return 2 * sizeof(std::string) + name.size() + source.size();
}

}  // namespace

size_t HeldBytes(const std::vector<ThreadFrames>& threads) {
  size_t held = 0;
  for (const ThreadFrames& t : threads) {
    held += sizeof t;
    for (size_t f = 0; f < t.frames.size(); ++f) held += FrameCost(t.frames[f], f < t.sources.size() ? t.sources[f] : "");
  }
  return held;
}

std::string FrameName(const proto::StackFrameText& f) {
  std::string name;
  if (!f.symbol.empty()) {
    name = f.symbol.substr(0, f.symbol.rfind("+0x"));
  } else {
    const size_t slash = f.module.rfind('/');
    char off[32];
    std::snprintf(off, sizeof off, "+0x%llx",
                  static_cast<unsigned long long>(f.base != 0 && f.pc >= f.base ? f.pc - f.base : f.pc));
    name = (f.module.empty() ? std::string("??") : f.module.substr(slash == std::string::npos ? 0 : slash + 1)) + off;
  }
  if (name.size() > kMaxFrameName) name.resize(kMaxFrameName);
  return name;
}

std::vector<ThreadFrames> FrameNamesOf(std::string_view report, size_t max_bytes, bool* cut) {
  const proto::StackSection section = proto::ReadStackSection(proto::StackSectionOf(report));
  std::vector<ThreadFrames> out;
  size_t held = 0;
  bool left_out = false;  // by max_bytes (proto's own bounds are its reader's)
  for (const proto::ThreadStack& t : section.threads) {
    if (held + sizeof(ThreadFrames) > max_bytes) {
      left_out = true;
      break;
    }
    held += sizeof(ThreadFrames);
    ThreadFrames named{t.tid, {}, {}};
    for (const proto::StackFrameText& f : t.frames) {
      std::string name = FrameName(f);
      std::string source = f.source.substr(0, kMaxFrameName);
      const size_t cost = FrameCost(name, source);
      if (held + cost > max_bytes) {
        left_out = true;
        break;
      }
      held += cost;
      named.frames.push_back(std::move(name));
      named.sources.push_back(std::move(source));
    }
    out.push_back(std::move(named));
  }
  if (cut && left_out) *cut = true;
  return out;
}

std::vector<ThreadLines> ThreadLinesOf(std::string_view report, size_t max_frames) {
  const proto::StackSection section = proto::ReadStackSection(proto::StackSectionOf(report));
  std::vector<ThreadLines> out;
  for (const proto::ThreadStack& t : section.threads) {
    // The block as the writer writes it, line by line: its thread line, frames, notes.
    const std::string block = proto::ThreadBlock(t);
    ThreadLines lines;
    std::string_view rest = block;
    while (!rest.empty()) {
      const size_t end = rest.find('\n');
      const std::string_view line = rest.substr(0, end);
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
      if (line.empty()) continue;
      if (lines.header.empty()) {
        lines.header = std::string(line);
      } else if (line[0] == '#') {
        if (lines.frames.size() < max_frames) lines.frames.emplace_back(line);
      } else {
        lines.notes.emplace_back(line);
      }
    }
    out.push_back(std::move(lines));
  }
  return out;
}

}  // namespace atracectl
