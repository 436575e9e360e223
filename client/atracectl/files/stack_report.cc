#include "files/stack_report.h"

#include <charconv>
#include <cstdio>

namespace atracectl {
namespace {

constexpr size_t kMaxThreads = 4096, kMaxFrames = 256, kMaxFrameText = 256;

// "#N 0xPC 0xBASE MODULE[ SYMBOL][ at SOURCE]" -> the frame's name; "" when not a frame line.
std::string FrameName(std::string_view line) {
  auto token = [&line]() {
    const size_t end = line.find(' ');
    std::string_view t = line.substr(0, end);
    line.remove_prefix(end == std::string_view::npos ? line.size() : end + 1);
    return t;
  };
  const std::string_view number = token(), pc_text = token(), base_text = token(), module = token();
  if (number.size() < 2 || number[0] != '#' || pc_text.rfind("0x", 0) != 0 || base_text.rfind("0x", 0) != 0 ||
      module.empty()) {
    return "";
  }
  std::string_view symbol = line;
  if (const size_t at = symbol.rfind(" at "); at != std::string_view::npos) symbol = symbol.substr(0, at);
  if (const size_t plus = symbol.rfind("+0x"); plus != std::string_view::npos) symbol = symbol.substr(0, plus);
  std::string name;
  if (!symbol.empty()) {
    name = std::string(symbol);
  } else {
    uint64_t pc = 0, base = 0;
    std::from_chars(pc_text.data() + 2, pc_text.data() + pc_text.size(), pc, 16);
    std::from_chars(base_text.data() + 2, base_text.data() + base_text.size(), base, 16);
    const size_t slash = module.rfind('/');
    char off[32];
    std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(base != 0 && pc >= base ? pc - base : pc));
    name = std::string(slash == std::string_view::npos ? module : module.substr(slash + 1)) + off;
  }
  if (name.size() > kMaxFrameText) name.resize(kMaxFrameText);
  return name;
}

// Calls `line` for each line of the report's [stack] section, until the next section or until
// it returns false.
template <class Line>
void ForEachStackLine(std::string_view report, Line line) {
  const size_t at = report.find("\n[stack]\n");
  if (at == std::string_view::npos) return;
  std::string_view rest = report.substr(at + 9);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view l = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (!l.empty() && l.front() == '[') return;  // the next section ([maps])
    if (!line(l)) return;
  }
}

// "Thread N (TID, NAME)": its tid and name.
void ReadThreadLine(std::string_view line, ThreadStack* t) {
  const size_t open = line.find('('), comma = line.find(", ", open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos) return;
  std::from_chars(line.data() + open + 1, line.data() + line.size(), t->tid);
  if (comma != std::string_view::npos && line.back() == ')') {
    t->name = std::string(line.substr(comma + 2, line.size() - comma - 3).substr(0, kMaxFrameText));
  }
}

}  // namespace

std::vector<ThreadStack> ParseStackSection(std::string_view report, size_t max_bytes, bool* cut) {
  std::vector<ThreadStack> out;
  size_t held = 0;
  auto left_out = [cut] {
    if (cut) *cut = true;
  };
  ForEachStackLine(report, [&](std::string_view line) {
    if (line.rfind("Thread ", 0) == 0) {
      if (out.size() >= kMaxThreads || held >= max_bytes) {
        left_out();
        return false;
      }
      ThreadStack t;
      ReadThreadLine(line, &t);
      held += t.name.size() + sizeof t;
      out.push_back(std::move(t));
    } else if (!out.empty() && line.rfind("#", 0) == 0) {
      std::string name = FrameName(line);
      if (name.empty()) return true;
      if (out.back().frames.size() >= kMaxFrames || held + name.size() > max_bytes) {
        left_out();
        return true;
      }
      held += name.size() + sizeof name;
      out.back().frames.push_back(std::move(name));
    }
    return true;
  });
  return out;
}

std::vector<ThreadStack> ParseStackLines(std::string_view report, size_t max_frames, size_t max_line) {
  auto capped = [max_line](std::string_view line) {
    return line.size() <= max_line ? std::string(line) : std::string(line.substr(0, max_line)) + "...(cut)";
  };
  std::vector<ThreadStack> out;
  ForEachStackLine(report, [&](std::string_view line) {
    if (line.rfind("Thread ", 0) == 0) {
      ThreadStack t;
      ReadThreadLine(line, &t);
      t.header = capped(line);
      out.push_back(std::move(t));
    } else if (!out.empty() && line.size() > 1 && line[0] == '#') {
      if (out.back().lines.size() < max_frames) out.back().lines.push_back(capped(line));
    } else if (!out.empty() && line.size() > 1 && line[0] == '(') {
      out.back().notes.push_back(capped(line));
    }
    return true;
  });
  return out;
}

}  // namespace atracectl
