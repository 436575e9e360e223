// ProcCrashInspector against real processes: a forked child of this test plays the crashed
// client (the helper, a descendant of this process, may ptrace it as root or with the same
// uid). Not this process's own thread: it is inside posix_spawn while the helper attaches.
// The shell helpers are stand-ins where a case needs a helper that hangs or dies. The cases
// of issue #20 (the helper inspects as the crashing user) need root to make children of
// other uids and namespaces; without it they say so and pass.
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "atraced/crash/proc_crash_inspector.h"
#include "support/temp_dir.h"

using atraced::crash::ProcCrashInspector;
using atraced::testing::TempDir;

namespace {

std::string Script(const TempDir& dir, const std::string& body) {
  const std::string path = dir.path() + "/helper.sh";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// Until `pid`'s main thread sleeps (in pause(), where the backtraces expect it), at most 5 s.
void WaitUntilSleeping(pid_t pid) {
  for (int i = 0; i < 5000; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'S') return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A child that runs `setup` (false: it failed) and then waits in pause(), killed and reaped
// at scope exit. `pid` is its pid once ready, or -1 if setup failed.
class Child {
 public:
  // `wait` (after telling the parent it is ready): pause() unless given.
  explicit Child(const std::function<bool()>& setup, const std::function<void()>& wait = {}) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::close(ready[0]);
      const char ok = setup() ? 'y' : 'n';
      (void)!::write(ready[1], &ok, 1);
      if (ok == 'y' && wait) wait();
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char ok = 'n';
    if (::read(ready[0], &ok, 1) != 1 || ok != 'y') ready_ = false;
    ::close(ready[0]);
    if (ready_) WaitUntilSleeping(pid_);
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return ready_ ? pid_ : -1; }

 private:
  pid_t pid_ = -1;
  bool ready_ = true;
};

// In a child: become uid/gid 65534 like a process started by that user (dumpable, which a
// change of uid clears), and let this test's descendants trace it under Yama.
bool BecomeNobody(bool dumpable = true) {
  if (::setgroups(0, nullptr) != 0 || ::setresgid(kNogroup, kNogroup, kNogroup) != 0 ||
      ::setresuid(kNobody, kNobody, kNobody) != 0) {
    return false;
  }
  ::prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0);
  ::prctl(PR_SET_PTRACER, ::getppid(), 0, 0, 0);  // EINVAL without Yama: fine
  return true;
}

// In a child: dlopen `path` for its crash_fixture_wait; nullptr if that fails.
using WaitFn = void (*)();
WaitFn LoadWait(const std::string& path) {
  void* lib = ::dlopen(path.c_str(), RTLD_NOW);
  return lib ? reinterpret_cast<WaitFn>(::dlsym(lib, "crash_fixture_wait")) : nullptr;
}

std::string Fixture(const std::string& name) { return std::string(ATRACED_CRASH_FIXTURES) + "/" + name; }

void Copy(const std::string& from, const std::string& to, unsigned mode) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
  ::chmod(to.c_str(), mode);
}

// The CRC the GNU debuglink carries (the zlib CRC-32).
uint32_t Crc32(const std::string& bytes) {
  uint32_t crc = 0xffffffffu;
  for (const unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The helper's peak memory from its last line; -1 if absent.
long HelperPeakKib(const std::string& backtrace) {
  const size_t at = backtrace.find("helper peak memory ");
  return at == std::string::npos ? -1 : std::atol(backtrace.c_str() + at + 19);
}

bool Root() { return ::geteuid() == 0; }

}  // namespace

TEST_CASE("crash inspector: threads, maps and a backtrace of a live thread", "[crash][inspector]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (;;) ::pause();
  }
  WaitUntilSleeping(child);
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child, child, ::getuid(), ::getgid()}, std::chrono::seconds(10));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  INFO(facts.backtrace);
  CHECK(facts.threads.find(std::to_string(child) + " crash_tests") == 0);
  CHECK(facts.maps.find("crash_tests") != std::string::npos);
  // pause() at the top, main at the bottom.
  CHECK(facts.backtrace.find("Thread 1 (") == 0);
  CHECK(facts.backtrace.find("\n#0 0x") != std::string::npos);
  CHECK(facts.backtrace.find("pause") != std::string::npos);
  CHECK(facts.backtrace.find(" main+0x") != std::string::npos);
}

TEST_CASE("crash inspector: all threads, when configured, after the crashing one", "[crash][inspector]") {
  int tids[2];
  REQUIRE(::pipe(tids) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the main thread "crashed"; a second one waits elsewhere
    std::thread([fd = tids[1]] {
      const pid_t self = ::gettid();
      (void)!::write(fd, &self, sizeof self);
      for (;;) ::pause();
    }).detach();
    for (;;) ::pause();
  }
  pid_t second = 0;
  REQUIRE(::read(tids[0], &second, sizeof second) == sizeof second);
  ::close(tids[0]);
  ::close(tids[1]);
  WaitUntilSleeping(child);
  ProcCrashInspector inspector(ATRACED_BINARY, /*all_threads=*/true);
  const auto facts = inspector.Inspect({child, child, ::getuid(), ::getgid()}, std::chrono::seconds(10));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("Thread 1 (" + std::to_string(child) + ", ") == 0);  // the crashing thread first
  const size_t other = facts.backtrace.find("\nThread 2 (" + std::to_string(second) + ", ");
  REQUIRE(other != std::string::npos);
  CHECK(facts.backtrace.find(" main+0x") < other);
  CHECK(facts.backtrace.find("\n#0 0x", other) != std::string::npos);
  CHECK(facts.backtrace.find("(" + std::to_string(child) + ", ", other) == std::string::npos);  // listed once
  CHECK(facts.threads.find(std::to_string(second) + " ") != std::string::npos);
}

TEST_CASE("crash inspector: a thread of another process is not unwound", "[crash][inspector]") {
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({::getpid(), 1, ::getuid(), ::getgid()}, std::chrono::seconds(1));  // pid 1 is never our thread
  CHECK(facts.backtrace.find("is not a thread of pid") != std::string::npos);
}

TEST_CASE("crash inspector: a helper that hangs is killed at the deadline", "[crash][inspector]") {
  TempDir dir;
  ProcCrashInspector inspector(Script(dir, "exec sleep 30"));
  const auto start = std::chrono::steady_clock::now();
  const auto facts = inspector.Inspect({::getpid(), ::gettid(), ::getuid(), ::getgid()}, std::chrono::milliseconds(200));
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(facts.backtrace.find("took longer than 200 ms") != std::string::npos);
  CHECK(took < std::chrono::seconds(10));  // not the helper's 30 s
}

TEST_CASE("crash inspector: a helper that dies is reported, not fatal", "[crash][inspector]") {
  TempDir dir;
  ProcCrashInspector inspector(Script(dir, "kill -SEGV $$"));
  const auto facts = inspector.Inspect({::getpid(), ::gettid(), ::getuid(), ::getgid()}, std::chrono::seconds(5));
  CHECK(facts.backtrace.find("died of signal 11") != std::string::npos);
}

// Issue #20: the helper inspects with no more privilege than the crashing process has.

TEST_CASE("crash inspector: a process of uid 65534 is inspected as uid 65534, without root", "[crash][inspector][drop]") {
  if (!Root()) {
    WARN("needs root to make a process of another uid; skipping");
    return;
  }
  Child child([] { return BecomeNobody(); });
  REQUIRE(child.pid() > 0);
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  INFO(facts.threads << facts.backtrace);
  CHECK(facts.threads.find(std::to_string(child.pid()) + " crash_tests") == 0);
  CHECK(facts.maps.find("libc.so") != std::string::npos);
  CHECK(facts.backtrace.find("Thread 1 (") == 0);
  CHECK(facts.backtrace.find("\n#0 0x") != std::string::npos);
  CHECK(facts.backtrace.find("pause") != std::string::npos);
  // The helper says what it ran as: the user, no capability left, no way back.
  CHECK(facts.backtrace.find("(inspected as uid 65534 gid 65534 with 0 supplementary groups, capabilities none, "
                             "no_new_privs 1;") != std::string::npos);
}

TEST_CASE("crash inspector: budget 0 gives threads and maps, read as the user, and no backtrace", "[crash][inspector][drop]") {
  if (!Root()) {
    WARN("needs root to make a process of another uid; skipping");
    return;
  }
  Child child([] { return BecomeNobody(); });
  REQUIRE(child.pid() > 0);
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, kNogroup}, std::chrono::milliseconds(0));
  CHECK(facts.threads.find(std::to_string(child.pid()) + " crash_tests") == 0);
  CHECK(facts.maps.find("libc.so") != std::string::npos);
  CHECK(facts.backtrace == "(none: no time to unwind)\n");
}

TEST_CASE("crash inspector: a setuid-like process (real uid 65534, effective 0) is refused", "[crash][inspector][drop]") {
  if (!Root()) {
    WARN("needs root to make a setuid-like process; skipping");
    return;
  }
  Child child([] { return ::setresuid(kNobody, 0, 0) == 0; });
  REQUIRE(child.pid() > 0);
  ProcCrashInspector inspector(ATRACED_BINARY);
  for (const gid_t gid : {gid_t{0}, kNogroup}) {
    const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, gid}, std::chrono::seconds(10));
    INFO(facts.backtrace);
    CHECK(facts.backtrace.find("(none: pid " + std::to_string(child.pid()) + " is not plainly uid 65534") == 0);
    CHECK(facts.backtrace.find("uids 65534 0 0 0") != std::string::npos);
    CHECK(facts.backtrace.find("#0 ") == std::string::npos);
    CHECK(facts.maps.find("(not read: ") == 0);
    CHECK(facts.maps.find("libc.so") == std::string::npos);
    CHECK(facts.threads.find("(not listed: ") == 0);
  }
}

TEST_CASE("crash inspector: a root process claimed as uid 65534 is refused", "[crash][inspector][drop]") {
  if (!Root()) {
    WARN("needs root to make a root process; skipping");
    return;
  }
  Child child([] { return true; });
  REQUIRE(child.pid() > 0);
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("is not plainly uid 65534 gid 65534 (uids 0 0 0 0, gids 0 0 0 0)") != std::string::npos);
  CHECK(facts.maps.find("crash_tests") == std::string::npos);
  CHECK(facts.backtrace.find("#0 ") == std::string::npos);
}

TEST_CASE("crash inspector: a process that made itself not dumpable is not read", "[crash][inspector][drop]") {
  if (!Root()) {
    WARN("needs root to make a process of another uid; skipping");
    return;
  }
  Child child([] { return BecomeNobody(/*dumpable=*/false); });
  REQUIRE(child.pid() > 0);
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  INFO(facts.backtrace);
  // Root with CAP_SYS_PTRACE would read it; the user may not.
  CHECK(facts.backtrace.find("(none: the kernel refused uid 65534 access to pid " + std::to_string(child.pid())) == 0);
  CHECK(facts.maps.find("libc.so") == std::string::npos);
  CHECK(facts.threads.find("(not listed: ") == 0);
}

TEST_CASE("crash inspector: a daemon that is not root inspects only its own uid's processes", "[crash][inspector][drop]") {
  if (!Root() || ::access("/usr/bin/setpriv", X_OK) != 0) {
    WARN("needs root and setpriv to run the helper as another uid; skipping");
    return;
  }
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  // The daemon (here: the helper it starts) runs as uid 65534 from the start.
  ProcCrashInspector inspector(
      Script(dir, std::string("exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ") + ATRACED_BINARY + " \"$@\""));
  Child root_child([] { return true; });
  Child nobody_child([] { return BecomeNobody(); });
  REQUIRE(root_child.pid() > 0);
  REQUIRE(nobody_child.pid() > 0);
  // Even told the truth (uid 0), it cannot become root: refused before reading anything.
  const auto other = inspector.Inspect({root_child.pid(), root_child.pid(), 0, 0}, std::chrono::seconds(10));
  INFO(other.backtrace);
  CHECK(other.backtrace.find("this daemon runs as uid 65534, not root") != std::string::npos);
  CHECK(other.maps.find("crash_tests") == std::string::npos);
  const auto own = inspector.Inspect({nobody_child.pid(), nobody_child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  INFO(own.backtrace);
  CHECK(own.backtrace.find("pause") != std::string::npos);
  CHECK(own.backtrace.find("(inspected as uid 65534 gid 65534 with 0 supplementary groups, capabilities none") != std::string::npos);
}

TEST_CASE("crash inspector: a ../ debuglink is not followed to a root-only file", "[crash][inspector][elf]") {
  if (!Root()) {
    WARN("needs root to make a root-only secret and a process of another uid; skipping");
    return;
  }
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  std::filesystem::create_directories(dir / "pub/lib");
  std::filesystem::create_directories(dir / "secret");
  ::chmod((dir / "pub").c_str(), 0755);
  ::chmod((dir / "pub/lib").c_str(), 0755);
  ::chmod((dir / "secret").c_str(), 0700);
  // The secret: a debug file for the library whose symbol table says secret_wait_fn, and
  // with the library's build id and the CRC the debuglink names, so an unwinder that opens
  // it uses it.
  const std::string secret = dir / "secret/x.debug";
  Copy(Fixture("crash_secret.debug"), secret, 0600);
  const std::string secret_bytes = ReadAll(secret);
  REQUIRE(secret_bytes.find("secret_wait_fn") != std::string::npos);
  std::string link = "../../secret/x.debug";
  link.push_back('\0');
  while (link.size() % 4 != 0) link.push_back('\0');
  const uint32_t crc = Crc32(secret_bytes);
  for (int i = 0; i < 4; ++i) link.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  {
    std::ofstream(dir / "link.bin", std::ios::binary) << link;
  }
  const std::string lib = dir / "pub/lib/libvictim.so";
  const std::string cmd = std::string(ATRACED_OBJCOPY) + " --add-section .gnu_debuglink=" + (dir / "link.bin") + " " +
                          Fixture("libcrash_victim.so") + " " + lib;
  REQUIRE(std::system(cmd.c_str()) == 0);
  ::chmod(lib.c_str(), 0644);
  // Any open of the secret from here on is seen.
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  REQUIRE(watch >= 0);
  REQUIRE(::inotify_add_watch(watch, secret.c_str(), IN_OPEN) >= 0);

  WaitFn wait = nullptr;
  Child child([&] { return BecomeNobody() && (wait = LoadWait(lib)) != nullptr; }, [&] { wait(); });
  REQUIRE(child.pid() > 0);
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("public_wait_fn") != std::string::npos);  // the frame is there, from .dynsym
  CHECK(facts.backtrace.find("secret_wait_fn") == std::string::npos);
  CHECK(facts.backtrace.find("not a plain file name") != std::string::npos);
  inotify_event events[16];
  const ssize_t got = ::read(watch, events, sizeof events);
  CHECK(got < 0);  // no IN_OPEN: nobody opened the secret
  ::close(watch);
}

TEST_CASE("crash inspector: a file mapped in a private mount namespace is read from that namespace", "[crash][inspector][elf]") {
  if (!Root()) {
    WARN("needs root for a private mount namespace and a process of another uid; skipping");
    return;
  }
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  std::filesystem::create_directories(dir / "lib");
  ::chmod((dir / "lib").c_str(), 0755);
  const std::string path = dir / "lib/libns.so";
  Copy(Fixture("build/libcrash_ns_host.so"), path, 0644);  // the host's file at that path
  Copy(Fixture("build/libcrash_ns_child.so"), dir / "private.so", 0644);
  WaitFn wait = nullptr;
  Child child(
      [&] {
        // Its own mount namespace, where `path` is another file; then the user's process.
        return ::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
               ::mount((dir / "private.so").c_str(), path.c_str(), nullptr, MS_BIND, nullptr) == 0 && BecomeNobody() &&
               (wait = LoadWait(path)) != nullptr;
      },
      [&] { wait(); });
  if (child.pid() < 0) {
    WARN("cannot make a private mount namespace here; skipping");
    return;
  }
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  INFO(facts.backtrace);
  CHECK(facts.maps.find(path) != std::string::npos);
  CHECK(facts.backtrace.find("child_only_wait") != std::string::npos);
  CHECK(facts.backtrace.find("host_only__wait") == std::string::npos);
}

TEST_CASE("crash inspector: a debug file with a compressed 256 MiB section is refused, not inflated", "[crash][inspector][elf]") {
  if (!Root()) {
    WARN("needs root to make a process of another uid; skipping");
    return;
  }
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  Copy(Fixture("libcrash_bomb.so"), dir / "libcrash_bomb.so", 0644);
  Copy(Fixture("libcrash_bomb.debug"), dir / "libcrash_bomb.debug", 0644);  // the debuglink's plain name, beside it
  WaitFn wait = nullptr;
  Child child([&] { return BecomeNobody() && (wait = LoadWait(dir / "libcrash_bomb.so")) != nullptr; }, [&] { wait(); });
  REQUIRE(child.pid() > 0);
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto start = std::chrono::steady_clock::now();
  const auto facts = inspector.Inspect({child.pid(), child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  const auto took = std::chrono::steady_clock::now() - start;
  INFO(facts.backtrace);
  CHECK(facts.backtrace.find("bomb_wait_here") != std::string::npos);
  // objcopy compressed every debug section; the first one found is named
  CHECK(facts.backtrace.find("libcrash_bomb.debug: compressed section .debug_") != std::string::npos);
  const long peak = HelperPeakKib(facts.backtrace);
  CHECK(peak > 0);
  CHECK(peak < 128 * 1024);  // inflating it alone would take 256 MiB
  CHECK(took < std::chrono::seconds(8));  // under the 10 s deadline, with a loaded machine's margin
}

TEST_CASE("crash inspector: a thread of a process in a pid namespace is found by its own tid", "[crash][inspector][pidns]") {
  if (!Root()) {
    WARN("needs root for a pid namespace; skipping");
    return;
  }
  int fds[2], ready_fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::pipe(ready_fds) == 0);
  const pid_t outer = ::fork();
  REQUIRE(outer >= 0);
  if (outer == 0) {  // makes the namespace; its child is pid 1 there
    pid_t inner = -1;
    if (::unshare(CLONE_NEWPID) == 0) inner = ::fork();
    if (inner == 0) {
      const char ready = 'y';
      (void)!::write(ready_fds[1], &ready, 1);
      for (;;) ::pause();
    }
    (void)!::write(fds[1], &inner, sizeof inner);
    for (;;) ::pause();
  }
  ::close(fds[1]);
  ::close(ready_fds[1]);
  pid_t inner = -1;
  REQUIRE(::read(fds[0], &inner, sizeof inner) == sizeof inner);
  char ready = 'n';
  if (inner > 0) REQUIRE(::read(ready_fds[0], &ready, 1) == 1);  // the inner one is about to pause
  ::close(fds[0]);
  ::close(ready_fds[0]);
  if (inner > 0) WaitUntilSleeping(inner);
  if (inner <= 0) {
    ::kill(outer, SIGKILL);
    ::waitpid(outer, nullptr, 0);
    WARN("cannot make a pid namespace here; skipping");
    return;
  }
  ProcCrashInspector inspector(ATRACED_BINARY);
  const auto facts = inspector.Inspect({inner, 1, 0, 0}, std::chrono::seconds(10));
  const auto wrong = inspector.Inspect({inner, 2, 0, 0}, std::chrono::seconds(10));
  ::kill(inner, SIGKILL);
  ::kill(outer, SIGKILL);
  ::waitpid(outer, nullptr, 0);
  INFO(facts.threads << facts.backtrace);
  CHECK(facts.threads.find(std::to_string(inner) + " crash_tests (tid 1 in its pid namespace)") == 0);
  CHECK(facts.backtrace.find("Thread 1 (") == 0);
  CHECK(facts.backtrace.find("\n#0 0x") != std::string::npos);
  CHECK(facts.backtrace.find("pause") != std::string::npos);
  CHECK(wrong.backtrace.find("(none: thread 2 is not a thread of pid " + std::to_string(inner) + ")") == 0);
}

TEST_CASE("crash inspector: a root process needs CAP_SYS_PTRACE, a user's process needs no capability", "[crash][inspector][drop]") {
  if (!Root() || ::access("/usr/bin/setpriv", X_OK) != 0) {
    WARN("needs root and setpriv to run the helper without CAP_SYS_PTRACE; skipping");
    return;
  }
  // Why systemd/atraced.service keeps CAP_SYS_PTRACE: a root client holds every capability,
  // and the kernel lets a root tracer without CAP_SYS_PTRACE read only a process whose
  // capabilities are a subset of its own. A user's process is read as that user.
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  ProcCrashInspector inspector(Script(
      dir, std::string("exec /usr/bin/setpriv --bounding-set -sys_ptrace --inh-caps -sys_ptrace ") + ATRACED_BINARY + " \"$@\""));
  Child root_child([] { return true; });
  Child nobody_child([] { return BecomeNobody(); });
  REQUIRE(root_child.pid() > 0);
  REQUIRE(nobody_child.pid() > 0);
  const auto root = inspector.Inspect({root_child.pid(), root_child.pid(), 0, 0}, std::chrono::seconds(10));
  INFO(root.backtrace);
  CHECK(root.backtrace.find("(none: the kernel refused uid 0 access to pid") == 0);
  const auto user = inspector.Inspect({nobody_child.pid(), nobody_child.pid(), kNobody, kNogroup}, std::chrono::seconds(10));
  INFO(user.backtrace);
  CHECK(user.backtrace.find("pause") != std::string::npos);
}
