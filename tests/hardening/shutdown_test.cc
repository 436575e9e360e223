// Issue 37, defect 8, against the real binary: SIGTERM while ring saves wait in the I/O
// workers. The workers are held still with ptrace (every thread but the event loop's is
// stopped: the pool's, the remover's, the unmapper's, the crash runner's), so the saves are
// queued when the signal comes, whatever the machine's speed; they are let go once the daemon
// logged the stop, inside its grace period.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <string>
#include <thread>
#include <vector>

#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/test_rings.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

// Every thread of `pid` but its first, stopped under ptrace until destroyed.
class HeldThreads {
 public:
  explicit HeldThreads(pid_t pid) {
    DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
    REQUIRE(dir != nullptr);
    while (const dirent* e = ::readdir(dir)) {
      const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
      if (tid <= 0 || tid == pid) continue;
      if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) continue;
      held_.push_back(tid);
      REQUIRE(::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0);
      int status = 0;
      REQUIRE(::waitpid(tid, &status, __WALL) == tid);
    }
    ::closedir(dir);
  }
  ~HeldThreads() { Release(); }
  size_t size() const { return held_.size(); }
  void Release() {
    for (pid_t tid : held_) ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    held_.clear();
  }

 private:
  std::vector<pid_t> held_;
};

}  // namespace

TEST_CASE("SIGTERM with ring saves queued: every client gets its reply before its connection closes",
          "[hardening][shutdown]") {
  DaemonProcess d({{"--io-workers", "2"}});
  REQUIRE(d.Start());
  constexpr int kClients = 8;
  std::vector<RawClient> clients;
  for (int i = 0; i < kClients; ++i) {
    auto c = RawClient::Connect(d.socket());
    REQUIRE(c);
    REQUIRE(c->Hello(ATR_FEATURE_MEMFD));
    UniqueFd ring = RingWith({"record of client " + std::to_string(i)});
    auto r = c->CallWithFd(ATR_OP_RING_REGISTER, RegisterPayload(1), ring.get());
    REQUIRE(r);
    REQUIRE(r->status == 0);
    clients.push_back(std::move(*c));
  }
  HeldThreads held(d.pid());
  REQUIRE(held.size() >= 2);  // at least the two I/O workers
  for (auto& c : clients) REQUIRE(c.Send(ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})));
  // Queued: the loop makes each save's directory before it hands the job to a (held) worker.
  auto probe = Connected(d);
  uint32_t dirs = 0;
  for (int i = 0; i < 200 && dirs < kClients; ++i) {
    dirs = QueryStatus(probe).host_dirs;
    if (dirs < kClients) std::this_thread::sleep_for(50ms);
  }
  REQUIRE(dirs == kClients);
  d.Signal(SIGTERM);
  REQUIRE(d.WaitForLog("stopping on signal"));
  held.Release();
  int replied = 0;
  for (auto& c : clients) {
    auto r = c.Read(10s);
    INFO("a client got " << (r ? "status " + std::to_string(r->status) : std::string("a closed connection")));
    CHECK(r);
    if (r) {
      CHECK(r->status == 0);
      ++replied;
    }
  }
  CHECK(replied == kClients);
}
