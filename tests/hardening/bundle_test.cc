// `atracectl export --format tar` run by root against what an unprivileged user controls
// (issue 37, defects 1 and 4): the directory the output is made in, and the sparse length of a
// file written through a passed descriptor. Each test runs the built atracectl, real GNU tar
// and gzip; a fake `tar` first on PATH holds the bundle at the moment tar would start, which
// is the window the user aims at.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "as_user.h"
#include "support/daemon_helpers.h"
#include "support/subprocess.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSecret = "root's own file, which no bundle may touch\n";

// atracectl running in the background, stdout and stderr to files.
class RunningCtl {
 public:
  RunningCtl(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::setpgid(0, 0);  // its own group: a run past its time is killed with its tar and gzip
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      const int null = ::open("/dev/null", O_RDONLY);
      const int out = ::open((io_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = ::open((io_ / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (null < 0 || out < 0 || err < 0) ::_exit(96);
      ::dup2(null, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      std::vector<char*> argv{const_cast<char*>(ATRACECTL_BINARY)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(97);
    }
    ::setpgid(pid_, pid_);  // as the child does: whichever runs first
  }
  ~RunningCtl() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // The exit code, or -1 when it ran past `timeout` (the destructor kills it and its children).
  int Finish(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(20ms);
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string err() const { return ReadFile(io_ / "err"); }

 private:
  TempDir io_;
  pid_t pid_ = -1;
};

bool Eventually(const std::function<bool()>& done, std::chrono::seconds timeout = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

bool Has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// What `/bin/tar ARGS` prints (stdout and stderr), and its exit code.
std::pair<std::string, int> Tar(std::vector<std::string> args) {
  args.insert(args.begin(), "/bin/tar");
  const RunResult tar = Run(args, {.stderr_to_stdout = true});
  return {tar.out, tar.exit_code};
}

// A `tar` that stops where the real one would start: it makes <gate>/started, waits for
// <gate>/go, then fails if <gate>/fail exists, or else runs the real tar with its arguments.
struct HeldTar {
  TempDir bin, gate;
  HeldTar() {
    WriteFile(bin / "tar", "#!/bin/sh\n: > \"$ATRACE_TEST_GATE/started\"\n"
                           "while [ ! -e \"$ATRACE_TEST_GATE/go\" ]; do sleep 0.02; done\n"
                           "[ -e \"$ATRACE_TEST_GATE/fail\" ] && exit 2\nexec /bin/tar \"$@\"\n");
    REQUIRE(::chmod((bin / "tar").c_str(), 0755) == 0);
  }
  std::map<std::string, std::string> Env() const {
    const char* path = std::getenv("PATH");
    return {{"PATH", bin.path() + ":" + (path ? path : "/usr/bin:/bin")}, {"ATRACE_TEST_GATE", gate.path()}};
  }
  bool Started() const { return Exists(gate / "started"); }
  void Go(bool fail = false) {
    if (fail) WriteFile(gate / "fail", "");
    WriteFile(gate / "go", "");
  }
};

// A directory the attacker owns (as an upload or scratch directory), where root writes the
// bundle, and a root-only file elsewhere.
struct Places {
  TempDir users, roots;
  std::string out = users / "report.tar.gz";
  std::string secret = roots / "secret";
  Places() {
    REQUIRE(::chown(users.path().c_str(), kAttacker, kAttacker) == 0);
    REQUIRE(::chmod(users.path().c_str(), 0755) == 0);
    WriteFile(secret, kSecret);
    REQUIRE(::chmod(secret.c_str(), 0600) == 0);
  }
};

// The attacker, once released, puts at `at` (atomically, by rename) a symlink to `target`
// or, with `own_file`, a file of its own; it reports "0 placed" or what failed.
void PlaceWhenReleased(int out, int in, const std::string& at, const std::string& target, bool own_file) {
  WaitRelease(in);
  const std::string staged = at + ".staged";
  const bool made = own_file ? (WriteFile(staged, "the attacker's own file\n"), Exists(staged))
                             : ::symlink(target.c_str(), staged.c_str()) == 0;
  if (!made || ::rename(staged.c_str(), at.c_str()) != 0) {
    Report(out, -1, std::string("could not place: ") + std::strerror(errno));
    return;
  }
  Report(out, 0, "placed");
}

bool IsRegularOfRoot(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0;
}

}  // namespace

TEST_CASE("export --output through a symlink already there is refused and its target untouched",
          "[hardening][security][bundle]") {
  if (!NeedsRoot()) return;
  Places p;
  REQUIRE(::symlink(p.secret.c_str(), p.out.c_str()) == 0);
  const std::string dangling = p.users / "dangling.tar.gz";
  REQUIRE(::symlink((p.roots / "made-through-a-link").c_str(), dangling.c_str()) == 0);
  // No daemon at all: the output is refused before any other work, so the refusal names it.
  for (const std::string& out : {p.out, dangling}) {
    for (const char* format : {"tar", "chrome-json", "html"}) {
      RunningCtl ctl({"--socket", p.roots / "no.sock", "export", "--format", format, "--output", out});
      CHECK(ctl.Finish(60s) == 1);
      INFO(ctl.err());
      CHECK(Has(ctl.err(), out + ": File exists (an output file is never written over, nor through a link)"));
    }
  }
  CHECK(ReadFile(p.secret) == kSecret);
  CHECK_FALSE(Exists(p.roots / "made-through-a-link"));
}

TEST_CASE("export makes its output before it asks the daemon, and leaves it empty, not removed, when it fails",
          "[hardening][bundle]") {
  TempDir tmp;
  const std::string out = tmp / "report.tar.gz";
  RunningCtl ctl({"--socket", tmp / "no.sock", "export", "--format", "tar", "--output", out});
  CHECK(ctl.Finish(60s) == 1);
  INFO(ctl.err());
  CHECK(Has(ctl.err(), out + " is left empty; remove it yourself"));
  REQUIRE(Exists(out));
  CHECK(ReadFile(out).empty());
  CHECK((Mode(out) & ~0640u) == 0);  // 0640 less the umask
}

namespace {

// Root's bundle into the attacker's directory, held where tar would start (status has run,
// the metadata is written): the window the attacker aims at. By then the output is already
// root's own new file, which `made` names too, for the test to look at afterwards.
struct HeldBundle {
  DaemonProcess d;
  Places p;
  HeldTar tar;
  std::optional<RunningCtl> ctl;
  std::string made = p.roots / "made.tar.gz";
  bool output_was_made = false;
  HeldBundle() {
    REQUIRE(d.Start());
    // One directory to export: an export of nothing stops before tar with an error.
    REQUIRE(atraced::testing::Run({ATRACECTL_BINARY, "--socket", d.socket(), "emit", "--event", "schedule", "--object",
                                   "o"},
                                  {.input = "x"})
                .exit_code == 0);
    ctl.emplace(std::vector<std::string>{"--socket", d.socket(), "export", "--format", "tar", "--output", p.out},
                tar.Env());
    REQUIRE(Eventually([&] { return tar.Started(); }));
    output_was_made = IsRegularOfRoot(p.out) && ::link(p.out.c_str(), made.c_str()) == 0;
  }
};

}  // namespace

TEST_CASE("a symlink planted at the bundle's name while atracectl works is not written through",
          "[hardening][security][bundle]") {
  if (!NeedsRoot()) return;
  HeldBundle held;
  CHECK(held.output_was_made);
  Attacker attacker([&](int out, int in) { PlaceWhenReleased(out, in, held.p.out, held.p.secret, false); });
  attacker.Release();
  CHECK(attacker.Line() == "0 placed\n");
  held.tar.Go();
  const int rc = held.ctl->Finish(120s);
  INFO(held.ctl->err());
  CHECK(rc == 0);
  CHECK(ReadFile(held.p.secret) == kSecret);
  REQUIRE(held.output_was_made);
  auto [listing, listed] = Tar({"-tzf", held.made});  // the bundle is in the file atracectl made
  INFO(listing);
  CHECK(listed == 0);
  CHECK(Has(listing, "status.json\n"));
}

TEST_CASE("a bundle that fails does not remove the file someone else put at its name",
          "[hardening][security][bundle]") {
  if (!NeedsRoot()) return;
  HeldBundle held;
  Attacker attacker([&](int out, int in) { PlaceWhenReleased(out, in, held.p.out, "", true); });
  attacker.Release();
  CHECK(attacker.Line() == "0 placed\n");
  held.tar.Go(/*fail=*/true);
  CHECK(held.ctl->Finish(120s) == 1);
  INFO(held.ctl->err());
  CHECK(Has(held.ctl->err(), "tar exited 2"));
  CHECK(Has(held.ctl->err(), held.p.out + " is left empty; remove it yourself"));
  CHECK(ReadFile(held.p.out) == "the attacker's own file\n");
  REQUIRE(held.output_was_made);
  CHECK(ReadFile(held.made).empty());
}

TEST_CASE("a user's 1 TiB hole is bundled as the block it takes, quickly", "[hardening][security][bundle]") {
  if (!NeedsRoot()) return;
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  constexpr off_t kTiB = off_t{1} << 40;
  Attacker attacker([&](int out, int) {
    RawClient c = Connected(d);
    const bool opened = c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(1)))->status == 0 &&
                        c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "hole")))->status == 0 &&
                        c.Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}))->status == 0 && c.fds().size() == 1;
    if (!opened) return Report(out, -1, "no descriptor");
    const int fd = c.fds().front().get();
    const bool grown = ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_APPEND) == 0 && ::ftruncate(fd, kTiB) == 0 &&
                       ::pwrite(fd, "x", 1, kTiB) == 1;
    c.fds().clear();
    const bool ended = c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}))->status == 0 &&
                       c.Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}))->status == 0;
    Report(out, grown && ended ? 0 : -2, grown ? "grown" : std::strerror(errno));
  });
  REQUIRE(attacker.Line() == "0 grown\n");
  TempDir tmp;
  const std::string out = tmp / "report.tar.gz";
  const auto start = std::chrono::steady_clock::now();
  RunningCtl ctl({"--socket", d.socket(), "export", "--format", "tar", "--output", out});
  // Without --sparse, tar reads the whole terabyte: over three hours here.
  const int rc = ctl.Finish(120s);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  INFO(ctl.err());
  REQUIRE(rc == 0);
  Measure("bundle.sparse_tib_ms", took.count());
  struct stat st {};
  REQUIRE(::stat(out.c_str(), &st) == 0);
  Measure("bundle.sparse_tib_bytes", st.st_size);
  CHECK(st.st_size < 1024 * 1024);
  auto [listing, listed] = Tar({"--numeric-owner", "-tvzf", out});
  INFO(listing);
  CHECK(listed == 0);
  CHECK(Has(listing, " " + std::to_string(kTiB + 1) + " "));  // its length, holes restored on extraction
  CHECK(Has(listing, "hole"));
}

TEST_CASE("a bundle over --max-size stops with an error that names the bound", "[hardening][bundle]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  {
    RawClient c = Connected(d);
    REQUIRE(c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(1)))->status == 0);
    REQUIRE(c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "dense")))->status == 0);
    REQUIRE(c.Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}))->status == 0);
    REQUIRE(c.fds().size() == 1);
    const std::string data(256 * 1024, 'd');
    REQUIRE(::write(c.fds().front().get(), data.data(), data.size()) == static_cast<ssize_t>(data.size()));
    c.fds().clear();
    REQUIRE(c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}))->status == 0);
    REQUIRE(c.Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}))->status == 0);
  }
  TempDir tmp;
  RunningCtl small({"--socket", d.socket(), "export", "--format", "tar", "--max-size", "64K", "--output", tmp / "a"});
  CHECK(small.Finish(120s) == 1);
  INFO(small.err());
  CHECK(Has(small.err(), "the bundle passed --max-size 65536 bytes (64.0 KiB) before it was complete, and was "
                         "stopped. Raise the bound (as --max-size 4G)"));
  CHECK(Has(small.err(), tmp / "a" + " is left empty"));
  CHECK(ReadFile(tmp / "a").empty());
  RunningCtl enough({"--socket", d.socket(), "export", "--format", "tar", "--max-size", "1M", "--output", tmp / "b"});
  CHECK(enough.Finish(120s) == 0);
  INFO(enough.err());
  CHECK(Tar({"-tzf", tmp / "b"}).first.find("dense") != std::string::npos);
  // A size it cannot read, or a bound on a format it does not bound, is a usage error.
  RunningCtl bad({"--socket", d.socket(), "export", "--format", "tar", "--max-size", "lots", "--output", tmp / "c"});
  CHECK(bad.Finish(60s) == 2);
  CHECK(Has(bad.err(), "--max-size 'lots' is not a size"));
  CHECK_FALSE(Exists(tmp / "c"));
}
