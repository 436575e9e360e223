// What the hang watch costs the daemon's loop per tick (issue 51; docs/BENCHMARKS.md): for N
// watched processes of R rings each, what HangWatch::Tick does while nothing stalls, on real
// memfd rings mapped as the daemon maps them (HeldRing::Map): one write_index load per ring,
// a sum per process, and ProgressWatch::Observe (daemon/service/include/atraced/service/
// progress_watch.h). Between ticks the writers advance every ring through a second, writable
// mapping of the same memfd (so each load misses the cache, as a record written by another
// CPU makes it), or none of them (the first still tick then reads each process's CPU time
// from /proc, once per stall).
//
//   atraced_hang_watch_bench [--processes N ...] [--rings R] [--ticks T]
//
// Prints, per N: ns per tick (median, and the slowest), ns per process, and the loop's CPU
// per hour at the daemon's tick (2 s).
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "atraced/processes/process_table.h"
#include "atraced/proto/ring_layout.h"
#include "atraced/rings/held_ring.h"
#include "atraced/service/progress_watch.h"

namespace {

using namespace atraced;
constexpr double kTicksPerHour = 3600.0 / 2.0;  // daemon_main.cc: kStatusInterval, 2 s
constexpr uint32_t kMsgNum = 1024, kMsgSize = 128;

int64_t NowNs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Ring {
  HeldRing held;
  atr_ring_header* writer;  // the process's side: advanced between ticks
};

// One ring in a sealed memfd, mapped by the daemon (HeldRing::Map) and by its "writer".
Ring MakeRing(uint32_t id) {
  proto::RingRegister reg;
  reg.object_id = id;
  reg.msg_num = kMsgNum;
  reg.msg_size = kMsgSize;
  reg.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(kMsgNum, kMsgSize));
  reg.name = "r" + std::to_string(id);
  UniqueFd fd(::memfd_create("ring", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid() || ::ftruncate(fd.get(), reg.ring_bytes) != 0) std::abort();
  void* w = ::mmap(nullptr, reg.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (w == MAP_FAILED) std::abort();
  auto* h = static_cast<atr_ring_header*>(w);
  h->magic = ATR_RING_MAGIC;
  h->version = ATR_RING_VERSION;
  h->header_size = ATR_RING_HEADER_SIZE;
  h->msg_num = kMsgNum;
  h->msg_size = kMsgSize;
  h->slot_size = ATR_RING_SLOT_SIZE(kMsgSize);
  h->realtime_ns = 1;
  h->monotonic_ns = 1;
  h->write_index = 1;
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) std::abort();
  auto held = HeldRing::Map(std::move(fd), reg);
  if (!held.ok()) {
    std::fprintf(stderr, "map: %s\n", held.status().message().c_str());
    std::exit(1);
  }
  return {std::move(*held), h};
}

void Bench(size_t processes, size_t rings_each, int ticks) {
  std::vector<std::vector<Ring>> rings(processes);
  for (size_t p = 0; p < processes; ++p) {
    for (size_t r = 0; r < rings_each; ++r) rings[p].push_back(MakeRing(static_cast<uint32_t>(r + 1)));
  }
  ProcProcessTable table;
  const auto self = table.Lookup(::getpid());
  // The CPU reader reads this process's own /proc/PID/stat: what a real one costs.
  std::vector<ProgressWatch::Sample> samples;
  // One tick as HangWatch::Tick does it.
  auto tick = [&](ProgressWatch& watch, std::chrono::seconds timeout, auto& now) {
    samples.clear();
    for (size_t p = 0; p < processes; ++p) {
      uint64_t written = 0;
      for (const Ring& r : rings[p]) written += r.held.write_index();
      samples.push_back({{static_cast<int32_t>(p + 1), 1}, written, timeout});
    }
    now += std::chrono::seconds(2);
    return watch.Observe(now, samples).size();
  };
  auto advance = [&] {
    for (auto& p : rings) {
      for (Ring& r : p) __atomic_fetch_add(&r.writer->write_index, 1, __ATOMIC_RELEASE);
    }
  };
  // Moving: every ring advances between ticks. Still: none does, under the default 300 s
  // (no /proc read before 150 s). Stalling: none does under a 4 s timeout, so every process
  // gets its CPU baseline read at the first still tick and its verdict (a read and a stall)
  // at the next: a whole host's processes stalling at once.
  for (const char* phase : {"moving", "still", "stalling"}) {
    const bool moving = std::strcmp(phase, "moving") == 0;
    const auto timeout = std::strcmp(phase, "stalling") == 0 ? std::chrono::seconds(4) : std::chrono::seconds(300);
    ProgressWatch watch([&](const ProgressWatch::Key&) { return table.CpuTime(::getpid(), self->start_ticks); });
    auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'780'000'000));
    std::vector<double> ns;
    size_t stalls = 0;
    advance();
    tick(watch, timeout, now);  // first sight: the states are made
    for (int t = 0; t < (moving || timeout.count() > 4 ? ticks : 3); ++t) {
      if (moving) advance();
      const int64_t start = NowNs();
      stalls += tick(watch, timeout, now);
      ns.push_back(static_cast<double>(NowNs() - start));
    }
    std::vector<double> sorted = ns;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    std::printf("%6zu processes x %zu ring(s), %-8s: median %11.0f ns/tick (%7.1f ns/process), slowest %11.0f ns, "
                "%8.3f ms CPU/hour at the median; stalls %zu\n",
                processes, rings_each, phase, median, median / static_cast<double>(processes), sorted.back(),
                median * kTicksPerHour / 1e6, stalls);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> counts;
  size_t rings = 1;
  int ticks = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--processes") == 0) counts.push_back(std::strtoul(argv[i + 1], nullptr, 10));
    else if (std::strcmp(argv[i], "--rings") == 0) rings = std::strtoul(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--ticks") == 0) ticks = std::atoi(argv[i + 1]);
  }
  if (counts.empty()) counts = {100, 10000};
  for (size_t n : counts) Bench(n, rings, ticks);
  return 0;
}
