#include "conc_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "bench_util.h"
#include "cann_baseline.h"

namespace atraced_bench {
namespace {

constexpr uint32_t kMaxSamples = 1 << 16;

// One process's results, in shared memory the parent reads after the children exit.
struct Slot {
  uint64_t events;
  int64_t last_ns;
  uint32_t nsamples;
  int error;
  char message[200];
  uint32_t samples_ns[kMaxSamples];
};

struct ConcShared {
  std::atomic<int> ready;
  std::atomic<int> stop;
  Slot slots[1];  // really `clients` of them
};

}  // namespace

ConcResult RunProcesses(int clients, int ms, const ConcSetup& setup) {
  const size_t bytes = sizeof(ConcShared) + sizeof(Slot) * static_cast<size_t>(clients);
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) Fail(std::string("mmap: ") + std::strerror(errno));
  auto* sh = new (mem) ConcShared();
  int go[2];
  if (::pipe2(go, O_CLOEXEC) != 0) Fail(std::string("pipe: ") + std::strerror(errno));
  std::vector<pid_t> kids;
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  for (int k = 0; k < clients; ++k) {
    pid_t pid = ::fork();
    if (pid < 0) Fail(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      ::close(go[1]);
      Slot& s = sh->slots[k];
      auto fail = [&](const std::string& m) {
        s.error = 1;
        std::snprintf(s.message, sizeof s.message, "%s", m.c_str());
        sh->ready.fetch_add(1);
        ::_exit(1);
      };
      try {
        ConcStep step = setup();
        sh->ready.fetch_add(1);
        char b;
        while (::read(go[0], &b, 1) < 0 && errno == EINTR) {
        }
        while (sh->stop.load(std::memory_order_relaxed) == 0) {
          uint32_t sample = step();
          if (s.nsamples < kMaxSamples) s.samples_ns[s.nsamples++] = sample;
          ++s.events;
          s.last_ns = NowNs();
        }
      } catch (const std::exception& ex) {
        fail(ex.what());
      }
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  ::close(go[0]);
  const int64_t wait_until = NowNs() + int64_t{60} * 1000000000;
  while (sh->ready.load() < clients && NowNs() < wait_until) ::usleep(1000);
  const int64_t t_go = NowNs();
  ::close(go[1]);  // every child's read() returns at once
  ::usleep(static_cast<useconds_t>(ms) * 1000);
  sh->stop.store(1);
  ConcResult r;
  for (pid_t pid : kids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && r.error.empty()) r.error = "a client process failed";
  }
  uint64_t events = 0;
  int64_t t_end = t_go;
  std::vector<double> lat;
  for (int k = 0; k < clients; ++k) {
    Slot& s = sh->slots[k];
    if (s.error && r.error.find(':') == std::string::npos) r.error = std::string("client: ") + s.message;
    events += s.events;
    t_end = std::max(t_end, s.last_ns);
    for (uint32_t i = 0; i < s.nsamples; ++i) lat.push_back(s.samples_ns[i] / 1000.0);
  }
  ::munmap(mem, bytes);
  if (!r.error.empty()) return r;
  std::sort(lat.begin(), lat.end());
  r.events = events;
  r.events_per_s = static_cast<double>(events) / (static_cast<double>(t_end - t_go) / 1e9);
  r.p50_us = PercentileSorted(lat, 50);
  r.p99_us = PercentileSorted(lat, 99);
  return r;
}

ConcStep CannProcessStep(const std::string& root) {
  auto data = std::make_shared<const std::vector<uint8_t>>(Pattern(kEventBytes));
  auto w = std::make_shared<CannWriter>(root, 10);
  for (int i = 0; i < 10; ++i) w->Emit(data->data(), data->size());  // at its limit, like the daemon
  return [w, data]() -> uint32_t {
    const int64_t t0 = NowNs();
    std::string dir;
    int rc = w->Begin(&dir);
    const int64_t t1 = NowNs();
    if (rc == 0) rc = w->Finish(dir, true, data->data(), data->size());
    if (rc != 0) Fail(std::string("baseline: ") + std::strerror(-rc));
    return static_cast<uint32_t>(t1 - t0);
  };
}

}  // namespace atraced_bench
