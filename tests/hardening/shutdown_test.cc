// Issue 37, defect 8, against the real binary: SIGTERM while ring saves wait in the I/O
// workers. The workers are held still with ptrace, so the saves are queued (or half-written)
// when the signal comes, whatever the machine's speed: in the first case every thread but the
// event loop's is stopped and let go once the daemon logged the stop, inside its grace
// period; in the second the one worker is held inside a save's write(2) past the grace
// period, so the saves queued behind it are answered -ESHUTDOWN and the one it writes lands.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/held_worker.h"
#include "support/raw_client.h"
#include "support/ring_client.h"

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

// `n` clients, each with a ring holding "record of client <i>".
std::vector<RawClient> ClientsWithRings(const DaemonProcess& d, int n) {
  std::vector<RawClient> clients;
  for (int i = 0; i < n; ++i) clients.push_back(ConnectedWithRing(d, "record of client " + std::to_string(i)));
  return clients;
}

// Waits until the daemon made `n` host directories: the loop makes each save's directory
// before it queues the save for a worker.
void WaitForDirs(const DaemonProcess& d, uint32_t n) {
  auto probe = Connected(d);
  uint32_t dirs = 0;
  for (int i = 0; i < 400 && dirs < n; ++i) {
    dirs = QueryStatus(probe).host_dirs;
    if (dirs < n) std::this_thread::sleep_for(50ms);
  }
  REQUIRE(dirs == n);
}

}  // namespace

TEST_CASE("SIGTERM with ring saves queued: every client gets its reply before its connection closes",
          "[hardening][shutdown]") {
  DaemonProcess d({{"--io-workers", "2"}});
  REQUIRE(d.Start());
  constexpr int kClients = 8;
  std::vector<RawClient> clients = ClientsWithRings(d, kClients);
  HeldThreads held(d.pid());
  REQUIRE(held.size() >= 2);  // at least the two I/O workers
  for (auto& c : clients) REQUIRE(c.Send(ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})));
  WaitForDirs(d, kClients);  // every save queued for a (held) worker
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

namespace {

// Every ring file under `trace_dir` (path -> content).
std::map<std::string, std::string> RingFiles(const std::string& trace_dir) {
  std::map<std::string, std::string> files;
  for (const auto& f : std::filesystem::recursive_directory_iterator(trace_dir)) {
    if (!f.is_regular_file() || f.path().filename().string().rfind("schedule_tracer_", 0) != 0) continue;
    std::ifstream in(f.path());
    std::stringstream text;
    text << in.rdbuf();
    files[f.path().string()] = text.str();
  }
  return files;
}

}  // namespace

TEST_CASE("SIGTERM with more saves queued than the workers finish: the queued ones get -ESHUTDOWN, the one "
          "being written lands with 0",
          "[hardening][shutdown]") {
  DaemonProcess d({{"--io-workers", "1"}});
  REQUIRE(d.Start());
  constexpr int kClients = 6;
  std::vector<RawClient> clients = ClientsWithRings(d, kClients);
  const std::vector<pid_t> workers = ThreadsNamed(d.pid(), "atraced-io");
  REQUIRE(workers.size() == 1);
  HeldWorker worker(d.pid(), workers[0]);
  // Client 0's save: its worker stopped inside the write of its ring file.
  REQUIRE(clients[0].Send(ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})));
  REQUIRE(worker.RunToWriteUnder(d.trace_dir()));
  // The others queue behind it.
  for (int i = 1; i < kClients; ++i) REQUIRE(clients[i].Send(ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})));
  WaitForDirs(d, kClients);
  d.Signal(SIGTERM);
  // Past the grace period the queued saves are answered; the one being written goes on.
  REQUIRE(d.WaitForLog("save(s) not started in the grace period answered -ESHUTDOWN", 30s));
  CHECK(d.LogHas(std::to_string(kClients - 1) + " save(s) not started"));
  worker.Release();
  std::vector<int32_t> statuses;
  for (auto& c : clients) {
    auto r = c.Read(30s);
    INFO("a client got " << (r ? "status " + std::to_string(r->status) : std::string("a closed connection")));
    REQUIRE(r);
    statuses.push_back(r->status);
  }
  CHECK(statuses[0] == 0);
  for (int i = 1; i < kClients; ++i) CHECK(statuses[i] == ATR_ESHUTDOWN);
  CHECK(d.Wait(30s) == 0);
  // What was answered 0 is on disk in full; what was answered -ESHUTDOWN holds nothing.
  int full = 0, empty = 0;
  for (const auto& [path, text] : RingFiles(d.trace_dir())) {
    INFO(path << ": " << text);
    if (text.find("record of client 0") != std::string::npos) {
      ++full;
    } else {
      CHECK(text.empty());
      ++empty;
    }
  }
  CHECK(full == 1);
  CHECK(empty == kClients - 1);
  // The next start lists the dropped saves' directories as incomplete, and only them.
  DaemonProcess again({{}, {}, true, 10, std::nullopt, d.root()});
  REQUIRE(again.Start());
  auto c = Connected(again);
  auto r = c.Call(ATR_OP_LIST, Payload(proto::ListRequest{0, 100}));
  REQUIRE(r);
  REQUIRE(r->status == 0);
  proto::ListReply list;
  REQUIRE(proto::Decode(r->body, &list).ok());
  REQUIRE(list.entries.size() == kClients);
  CHECK(list.entries[0].flags == 0);  // client 0's, made first
  for (size_t i = 1; i < list.entries.size(); ++i) CHECK(list.entries[i].flags == ATR_LIST_INCOMPLETE);
  CHECK(QueryStatus(c).incomplete_dirs == kClients - 1);
}
