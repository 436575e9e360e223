#include "support/reachable_program.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "support/subprocess.h"

namespace atraced::testing {
namespace {

namespace fs = std::filesystem;

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The copies of this test process: made once, removed when it exits (a forked child leaves
// through _exit and removes nothing).
class Stage {
 public:
  ~Stage() {
    if (!dir_.empty()) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }

  ReachableProgram Get(const std::string& program) {
    std::lock_guard<std::mutex> hold(mutex_);
    auto found = made_.find(program);
    if (found != made_.end()) return found->second;
    ReachableProgram staged = Make(program);
    made_.emplace(program, staged);
    return staged;
  }

 private:
  ReachableProgram Make(const std::string& program) {
    ReachableProgram r{program, "", ""};
    if (dir_.empty()) {
      std::string pattern = "/tmp/atraced-staged.XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr || ::chmod(pattern.c_str(), 0755) != 0) {
        r.why_not = "cannot make a staging directory under /tmp";
        return r;
      }
      dir_ = pattern;
      ::mkdir((dir_ + "/lib").c_str(), 0755);
    }
    // A directory per program keeps its file name, which is its comm (what `list` shows).
    const std::string home = dir_ + "/" + std::to_string(made_.size());
    const std::string copy = home + "/" + fs::path(program).filename().string();
    std::error_code ec;
    fs::create_directory(home, ec);
    if (!ec) fs::copy_file(program, copy, fs::copy_options::overwrite_existing, ec);
    if (ec || ::chmod(home.c_str(), 0755) != 0 || ::chmod(copy.c_str(), 0755) != 0) {
      r.why_not = "cannot copy " + program + " to " + copy + (ec ? ": " + ec.message() : "");
      return r;
    }
    // The libraries it loads from places other users cannot reach (the build tree's own).
    const RunResult ldd = Run({"ldd", program});
    std::istringstream lines(ldd.out);
    for (std::string line; std::getline(lines, line);) {
      const size_t arrow = line.find("=> /");
      if (arrow == std::string::npos) continue;
      const std::string lib = line.substr(arrow + 3, line.find(" (", arrow) - arrow - 3);
      if (FirstUnreachable(lib).empty()) continue;
      const std::string to = dir_ + "/lib/" + fs::path(lib).filename().string();
      fs::copy_file(lib, to, fs::copy_options::overwrite_existing, ec);
      if (ec || ::chmod(to.c_str(), 0644) != 0) {
        r.why_not = "cannot copy " + lib + " to " + to + (ec ? ": " + ec.message() : "");
        return r;
      }
      r.library_path = dir_ + "/lib";
    }
    r.path = copy;
    return r;
  }

  std::mutex mutex_;
  std::string dir_;
  std::map<std::string, ReachableProgram> made_;
};

}  // namespace

std::string FirstUnreachable(const std::string& path) {
  const fs::path full = fs::absolute(path).lexically_normal();
  fs::path at = full.root_path();
  for (auto part = full.begin(); part != full.end(); ++part) {
    if (part != full.begin()) at /= *part;
    struct stat st{};
    if (::stat(at.c_str(), &st) != 0) return at.string() + " (missing)";
    const bool last = std::next(part) == full.end();
    // A directory must be searchable; the program executable (and readable, for the loader's
    // libraries) by others.
    const mode_t need = S_ISDIR(st.st_mode) ? S_IXOTH : last ? (S_IROTH | (st.st_mode & S_IXUSR ? S_IXOTH : 0)) : S_IXOTH;
    if ((st.st_mode & need) != need) {
      return at.string() + " (mode " + Octal(st.st_mode) + ", owner uid " + std::to_string(st.st_uid) + ")";
    }
  }
  return "";
}

ReachableProgram Reachable(const std::string& program) {
  if (FirstUnreachable(program).empty()) return {program, "", ""};
  static Stage stage;
  return stage.Get(program);
}

}  // namespace atraced::testing
