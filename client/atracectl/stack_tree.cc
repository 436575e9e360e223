#include "stack_tree.h"

#include <algorithm>
#include <charconv>

#include "escape.h"
#include "fleet_groups.h"

namespace atracectl {
namespace {

constexpr size_t kMaxThreads = 4096, kMaxFrames = 256, kMaxFrameText = 256, kMaxNodes = 1 << 20;

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

}  // namespace

std::vector<ThreadStack> ParseStackSection(std::string_view report) {
  std::vector<ThreadStack> out;
  size_t at = report.find("\n[stack]\n");
  if (at == std::string_view::npos) return out;
  std::string_view rest = report.substr(at + 9);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (!line.empty() && line.front() == '[') break;  // the next section ([maps])
    if (line.rfind("Thread ", 0) == 0) {
      if (out.size() >= kMaxThreads) break;
      ThreadStack t;
      const size_t open = line.find('('), comma = line.find(", ", open == std::string_view::npos ? 0 : open);
      if (open != std::string_view::npos) {
        std::from_chars(line.data() + open + 1, line.data() + line.size(), t.tid);
        if (comma != std::string_view::npos && line.back() == ')') {
          t.name = std::string(line.substr(comma + 2, line.size() - comma - 3).substr(0, kMaxFrameText));
        }
      }
      out.push_back(std::move(t));
    } else if (!out.empty() && line.rfind("#", 0) == 0 && out.back().frames.size() < kMaxFrames) {
      std::string name = FrameName(line);
      if (!name.empty()) out.back().frames.push_back(std::move(name));
    }
  }
  return out;
}

void StackTree::Add(int64_t rank, const std::vector<std::string>& frames) {
  Node* node = &root_;
  node->ranks.insert(rank);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    auto& child = node->children[*it];
    if (!child) {
      if (nodes_ >= kMaxNodes) return;
      ++nodes_;
      child = std::make_unique<Node>();
    }
    node = child.get();
    node->ranks.insert(rank);
  }
}

namespace {

template <class Node>
std::vector<std::pair<const std::string*, const Node*>> Ordered(const Node& n) {
  std::vector<std::pair<const std::string*, const Node*>> kids;
  for (const auto& [name, child] : n.children) kids.push_back({&name, child.get()});
  std::stable_sort(kids.begin(), kids.end(), [](const auto& a, const auto& b) {
    return a.second->ranks.size() > b.second->ranks.size();
  });
  return kids;
}

template <class Node>
std::string Ranges(const Node& n) {
  return RankRanges(std::vector<int64_t>(n.ranks.begin(), n.ranks.end()));
}

template <class Node>
void TextOf(const Node& n, int depth, std::string* out) {
  for (const auto& [name, child] : Ordered(n)) {
    out->append(static_cast<size_t>(depth) * 2, ' ');
    *out += "[" + Ranges(*child) + "] " + TerminalLine(*name) + "\n";
    TextOf(*child, depth + 1, out);
  }
}

template <class Node>
void JsonOf(const Node& n, std::string* out) {
  *out += "[";
  bool first = true;
  for (const auto& [name, child] : Ordered(n)) {
    *out += std::string(first ? "" : ",") + "{\"frame\":" + JsonString(*name) + ",\"ranks\":" + JsonString(Ranges(*child)) +
            ",\"children\":";
    JsonOf(*child, out);
    *out += "}";
    first = false;
  }
  *out += "]";
}

}  // namespace

std::string StackTree::Text() const {
  std::string out;
  TextOf(root_, 0, &out);
  return out;
}

std::string StackTree::Json() const {
  std::string out;
  JsonOf(root_, &out);
  return out;
}

}  // namespace atracectl
