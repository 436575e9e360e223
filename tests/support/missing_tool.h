// A test that runs a program skips, naming its package, where the program is missing: a tool
// nothing installed is not the code's failure. scripts/check_test_tools.py makes sure CI and
// the package build do install it (tests/tools.txt).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace atraced::testing {

// "" when `program` is found on PATH; else why the test cannot run, naming the package.
inline std::string MissingTool(const std::string& program, const std::string& package) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', at), dirs.size());
    const std::string candidate = dirs.substr(at, end - at) + "/" + program;
    if (end > at && ::access(candidate.c_str(), X_OK) == 0) return "";
    at = end + 1;
  }
  return "needs " + program + ", from the Debian package " + package + " (bash scripts/dev.sh deps installs it)";
}

}  // namespace atraced::testing
