#include "support/asys_stackcore.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "support/subprocess.h"

namespace atraced::testing {
namespace {

bool Hex(const std::string& token, uint64_t* out) {
  if (token.size() < 3 || token[0] != '0' || (token[1] != 'x' && token[1] != 'X')) return false;
  char* end = nullptr;
  *out = std::strtoull(token.c_str() + 2, &end, 16);
  return *end == '\0';
}

std::vector<std::string> Tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool IsExecImage(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf64_Ehdr h{};
  const bool exec = ::read(fd, &h, sizeof h) == static_cast<ssize_t>(sizeof h) && h.e_type == ET_EXEC;
  ::close(fd);
  return exec;
}

}  // namespace

AsysStackcore ParseAsAsys(const std::string& report) {
  AsysStackcore out;
  std::vector<std::string> stack_lines;
  enum { kNone, kStack, kMaps } section = kNone;
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '[') {
      section = line.rfind("[stack]", 0) == 0 ? kStack : line.rfind("[map", 0) == 0 ? kMaps : kNone;
      continue;
    }
    const auto tokens = Tokens(line);
    if (section == kMaps && tokens.size() == 6 && tokens[5][0] == '/') {
      char* end = nullptr;
      const uint64_t start = std::strtoull(tokens[0].c_str(), &end, 16);
      if (*end == '-') out.maps_bases[start] = tokens[5];
    } else if (section == kStack && line.size() > 1 && line[0] == '#' && std::isdigit(static_cast<unsigned char>(line[1]))) {
      stack_lines.push_back(line);
    }
  }
  for (const std::string& line : stack_lines) {
    const auto tokens = Tokens(line);
    AsysFrame f;
    f.line = line;
    if (tokens.size() < 4 || !Hex(tokens[1], &f.pc) || !Hex(tokens[2], &f.base)) {
      out.problems.push_back("not a frame asys reads: " + line);
      continue;
    }
    const auto it = out.maps_bases.find(f.base);
    if (it == out.maps_bases.end()) {
      out.problems.push_back("base names no [maps] line: " + line);
    } else {
      f.module = it->second;
    }
    out.frames.push_back(f);
  }
  return out;
}

std::vector<std::string> Addr2LineAsAsys(const AsysFrame& frame) {
  if (frame.module.empty()) return {};
  const uint64_t address = IsExecImage(frame.module) ? frame.pc : frame.pc - frame.base;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
  const RunResult r = Run({"addr2line", hex, "-e", frame.module, "-f", "-C", "-s", "-i"});
  if (r.exit_code != 0) return {};
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace atraced::testing
