#include "atraced/core/process_table.h"

#include <fstream>
#include <sstream>

#include "atraced/core/names.h"

namespace atraced {
namespace {

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::optional<ProcessFacts> ParseProcStat(const std::string& text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcessFacts f;
  // A comm may hold any byte; file names may not.
  f.program = SanitizeName(text.substr(open + 1, close - open - 1), kMaxProgramName, "unknown");
  std::istringstream rest(text.substr(close + 1));
  // Fields after comm start at field 3 (state). pgrp is field 5, starttime field 22.
  std::string field;
  for (int index = 3; index <= 22 && rest >> field; ++index) {
    try {
      if (index == 5) f.pgid = static_cast<int32_t>(std::stol(field));
      if (index == 22) {
        f.start_ticks = std::stoull(field);
        return f;
      }
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<ProcessFacts> ProcProcessTable::Lookup(int32_t pid) {
  if (pid <= 0) return std::nullopt;
  std::string base = proc_root_ + "/" + std::to_string(pid);
  auto stat = Slurp(base + "/stat");
  if (!stat) return std::nullopt;
  auto facts = ParseProcStat(*stat);
  if (!facts) return std::nullopt;
  if (auto status = Slurp(base + "/status")) {
    std::istringstream lines(*status);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("Groups:", 0) != 0) continue;
      std::istringstream gs(line.substr(7));
      long g;
      while (gs >> g) facts->groups.push_back(static_cast<gid_t>(g));
    }
  }
  return facts;
}

}  // namespace atraced
