#include "files/bundle_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "files/bundle_meta.h"
#include "common/child_process.h"
#include "common/format.h"

namespace atracectl {
namespace {

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

// Runs args with stdout to the new file `path` in our scratch directory; its exit status.
int RunTo(const std::vector<std::string>& args, const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return 255;
  const pid_t pid = StartChild(args, -1, fd);
  ::close(fd);
  return pid > 0 ? WaitChild(pid) : 255;
}

// A scratch directory (mode 0700, ours), removed with what it holds.
struct Scratch {
  std::string path;
  Scratch() {
    // Absolute: tar is given the host's facts by their full paths from another directory.
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/atracectl-bundle.XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) path = templ;
  }
  ~Scratch() {
    if (path.empty()) return;
    const pid_t pid = StartChild({"rm", "-rf", "--", path});
    if (pid > 0) WaitChild(pid);
  }
};

// The host's facts in `meta`; the names of those that are there, bundle.jsonl first.
std::vector<std::string> WriteHostFacts(const Globals& g, const std::string& meta,
                                        const std::vector<atrace::ListEntry>& entries,
                                        const std::vector<atrace::Client::AgedEntry>& aged) {
  std::string lines = BundleHostLine(ThisHost());
  for (const auto& e : entries) lines += BundleDirLine(e);
  for (const auto& a : aged) lines += BundleAgedLine(a);
  Write(meta + "/" + kBundleMetaName, lines);
  std::vector<std::string> status_cmd{"/proc/self/exe"};
  if (!g.socket.empty()) status_cmd.insert(status_cmd.end(), {"--socket", g.socket});
  status_cmd.insert(status_cmd.end(), {"status", "--json"});
  const int status_rc = RunTo(status_cmd, meta + "/status.json");
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
  std::vector<std::string> present;
  for (const char* f : {kBundleMetaName, "status.json", "version.txt", "atraced.conf", "uname.txt", "os-release"}) {
    if (::access((meta + "/" + f).c_str(), F_OK) == 0) present.emplace_back(f);
  }
  return present;
}

enum class Copied { kAll, kPastBound, kWriteFailed };

// Copies `from` to the socket `to` until `from` ends, or until more than `bound` bytes came,
// or `to` refuses (MSG_NOSIGNAL: gzip gone is EPIPE, not SIGPIPE). *total: the bytes read.
Copied CopyBounded(int from, int to, uint64_t bound, uint64_t* total) {
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Copied::kAll;  // the end (a read error is tar's, and tar reports it)
    *total += static_cast<uint64_t>(n);
    if (*total > bound) return Copied::kPastBound;
    for (ssize_t sent = 0; sent < n;) {
      const ssize_t m = ::send(to, buf + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);
      if (m < 0 && errno == EINTR) continue;
      if (m <= 0) return Copied::kWriteFailed;
      sent += m;
    }
  }
}

}  // namespace

int WriteBundle(const Globals& g, const std::string& trace_dir, const std::vector<atrace::ListEntry>& entries,
                const std::vector<atrace::Client::AgedEntry>& aged, uint64_t max_size, NewOutputFile& out) {
  std::vector<std::string> rel_dirs;
  for (const auto& e : entries) rel_dirs.push_back(e.path);
  Scratch scratch;
  if (scratch.path.empty()) {
    std::cerr << "atracectl: export: cannot make a scratch directory: " << std::strerror(errno) << "\n";
    return kExitFailed;
  }
  const std::string meta = scratch.path + "/meta";
  ::mkdir(meta.c_str(), 0700);
  const std::vector<std::string> facts = WriteHostFacts(g, meta, entries, aged);
  // The directories' names, NUL-separated, relative to the trace dir (tar runs there).
  std::string list;
  for (const auto& d : rel_dirs) list += d + '\0';
  Write(scratch.path + "/dirs", list);

  // tar | (count, bound) | gzip > the output's descriptor. --sparse: a file's holes are
  // skipped (SEEK_DATA/SEEK_HOLE), so a bundle holds what the daemon counted, its allocated
  // blocks, not a length any holder of a passed descriptor may set. The bound is on the tar
  // stream: it stops even a file that is all data.
  int tar_out[2], gzip_in[2];
  if (::pipe2(tar_out, O_CLOEXEC) != 0 || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gzip_in) != 0) {
    std::cerr << "atracectl: export: " << std::strerror(errno) << "\n";
    return kExitFailed;
  }
  // tar runs in the trace dir: a user may pass through it (the daemon grants search, not
  // read), and GNU tar's -C opens a directory for reading, which that user may not. The
  // host's facts are named by their absolute paths (-P keeps them as given) and stored by
  // their base names; the event directories, relative to the trace dir, under atrace/.
  std::vector<std::string> argv{"tar", "--create", "--sparse", "--file", "-", "--owner=0", "--group=0",
                                "--numeric-owner", "--absolute-names", "--transform", "s,^/.*/,,",
                                "--transform", "s,^trace_,atrace/trace_,"};
  for (const std::string& f : facts) argv.push_back(meta + "/" + f);
  argv.insert(argv.end(), {"--null", "--files-from", scratch.path + "/dirs"});
  const pid_t gzip = StartChild({"gzip", "-c"}, gzip_in[0], out.fd());
  const pid_t tar = gzip > 0 ? StartChild(argv, -1, tar_out[1], -1, trace_dir) : -1;
  ::close(gzip_in[0]);
  ::close(tar_out[1]);
  uint64_t total = 0;
  const Copied copied = tar > 0 ? CopyBounded(tar_out[0], gzip_in[1], max_size, &total) : Copied::kAll;
  ::close(tar_out[0]);
  if (tar > 0 && copied != Copied::kAll) ::kill(tar, SIGKILL);  // stopped by us: not tar's failure
  ::close(gzip_in[1]);  // gzip's end of input
  const int tar_rc = tar > 0 ? WaitChild(tar) : tar;
  const int gzip_rc = gzip > 0 ? WaitChild(gzip) : gzip;

  if (copied == Copied::kPastBound) {
    std::cerr << "atracectl: export: the bundle passed --max-size " << max_size << " bytes (" << HumanBytes(max_size)
              << ") before it was complete, and was stopped. Raise the bound (as --max-size 4G) or select fewer "
                 "directories (--since, --kind, --pid, ...)\n";
    return kExitFailed;
  }
  if (gzip <= 0 || gzip_rc != 0 || copied == Copied::kWriteFailed) {
    std::cerr << "atracectl: export: gzip " << ChildOutcome(gzip > 0 ? gzip_rc : gzip, gzip > 0) << "\n";
    return kExitFailed;
  }
  if (tar <= 0 || tar_rc != 0) {
    std::cerr << "atracectl: export: tar " << ChildOutcome(tar > 0 ? tar_rc : tar, tar > 0)
              << " (GNU tar is needed for --format tar)\n";
    return kExitFailed;
  }
  out.Keep();
  std::cerr << "atracectl: wrote " << rel_dirs.size() << " event director" << (rel_dirs.size() == 1 ? "y" : "ies")
            << " and the host's facts to " << out.path() << "\n";
  return kExitOk;
}

}  // namespace atracectl
