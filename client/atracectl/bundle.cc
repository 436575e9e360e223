#include "bundle.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

extern char** environ;

namespace atracectl {
namespace {

// Runs argv with stdout to `out_path` (or inherited when empty); returns its exit status.
int Spawn(const std::vector<std::string>& args, const std::string& out_path) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!out_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0640);
  }
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -rc;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

bool Copy(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  return Write(to, s.str());
}

// A scratch directory, removed with what it holds.
struct Scratch {
  std::string path;
  Scratch() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/atracectl-bundle.XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) path = templ;
  }
  ~Scratch() {
    if (!path.empty()) Spawn({"rm", "-rf", "--", path}, "");
  }
};

}  // namespace

int WriteBundle(const Globals& g, const std::string& trace_dir, const std::vector<std::string>& rel_dirs,
                const std::string& output) {
  struct stat st {};
  if (::lstat(output.c_str(), &st) == 0) {
    std::cerr << "atracectl: export: " << output << ": File exists (a bundle is never written over a file)\n";
    return kExitFailed;
  }
  Scratch scratch;
  if (scratch.path.empty()) {
    std::cerr << "atracectl: export: cannot make a scratch directory: " << std::strerror(errno) << "\n";
    return kExitFailed;
  }
  const std::string meta = scratch.path + "/meta";
  ::mkdir(meta.c_str(), 0700);
  std::vector<std::string> status_cmd{"/proc/self/exe"};
  if (!g.socket.empty()) status_cmd.insert(status_cmd.end(), {"--socket", g.socket});
  status_cmd.insert(status_cmd.end(), {"status", "--json"});
  const int status_rc = Spawn(status_cmd, meta + "/status.json");
  std::string version = VersionLine() + "\n";
  if (status_rc != 0) version += "status.json: atracectl status exited " + std::to_string(status_rc) + "\n";
  if (!g.socket.empty()) version += "socket: " + g.socket + "\n";
  Write(meta + "/version.txt", version);
  utsname u{};
  if (::uname(&u) == 0) {
    Write(meta + "/uname.txt", std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.version + " " +
                                   u.machine + "\n");
  }
  Copy("/etc/os-release", meta + "/os-release");
  Copy("/etc/atraced/atraced.conf", meta + "/atraced.conf");
  // The directories' names, NUL-separated, relative to the trace dir (tar -C there).
  std::string list;
  for (const auto& d : rel_dirs) list += d + '\0';
  Write(scratch.path + "/dirs", list);
  std::vector<std::string> argv{"tar", "--create", "--gzip", "--file", output, "--owner=0", "--group=0",
                                "--numeric-owner", "--transform", "s,^trace_,atrace/trace_,", "-C", meta};
  for (const char* f : {"status.json", "version.txt", "atraced.conf", "uname.txt", "os-release"}) {
    if (::access((meta + "/" + f).c_str(), F_OK) == 0) argv.emplace_back(f);
  }
  argv.insert(argv.end(), {"-C", trace_dir, "--null", "--files-from", scratch.path + "/dirs"});
  const int rc = Spawn(argv, "");
  if (rc != 0) {
    std::cerr << "atracectl: export: tar " << (rc < 0 ? std::string(std::strerror(-rc)) : "exited " + std::to_string(rc))
              << " (GNU tar is needed for --format tar)\n";
    ::unlink(output.c_str());
    return kExitFailed;
  }
  std::cerr << "atracectl: wrote " << rel_dirs.size() << " event director" << (rel_dirs.size() == 1 ? "y" : "ies")
            << " and the host's facts to " << output << "\n";
  return kExitOk;
}

}  // namespace atracectl
