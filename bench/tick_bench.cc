// What the cycle counter's upkeep costs the daemon: CounterClock::Tick, which the event loop
// runs every tick (2 s), and its parts (daemon/rings/counter_clock.h, clock_history.h,
// counter_trust.h). A tick takes one clock snapshot (SampleClocks), adds it to the history
// (judging the interval since the last one), re-checks the CPU's word and the instruction,
// and every CounterClock::kProbeEveryTicks ticks also reads the counter pinned to each
// online CPU. Prints ns per tick, ordinary and probing, and the daemon CPU per hour at the
// daemon's tick rate.
//
// Two ways of calling Tick: back to back (caches warm, the history reaching its capacity and
// thinning as it does after hours), and spaced by a pause (caches as cold as the loop leaves
// them between ticks). Each tick is timed alone by this thread's CPU time and by
// CLOCK_MONOTONIC; a clock read costs ~20-500 ns of its own, stated beside the figures.
//
//   atraced_tick_bench [--ticks N] [--spaced N] [--pause-us U]
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "atraced/base/cycle_counter.h"
#include "atraced/rings/clock_history.h"
#include "atraced/rings/counter_clock.h"
#include "atraced/rings/counter_trust.h"

namespace {

constexpr double kTicksPerHour = 3600.0 / 2.0;  // daemon_main.cc: kStatusInterval, 2 s

int64_t Now(clockid_t clock) {
  timespec ts;
  ::clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string Clocksource() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return std::getline(in, name) && !name.empty() ? name : std::string("unknown");
}

struct Stats {
  double median = 0, mean = 0, min = 0, max = 0;
  size_t n = 0;
};

Stats Summarize(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

void Print(const char* what, const Stats& cpu, const Stats& wall) {
  std::printf("%-44s n=%-6zu cpu ns median %9.0f mean %9.0f min %9.0f max %9.0f | wall ns median %9.0f mean %9.0f\n",
              what, cpu.n, cpu.median, cpu.mean, cpu.min, cpu.max, wall.median, wall.mean);
}

// Times `fn` `n` times, each call alone.
template <typename Fn>
void TimeEach(const char* what, int n, Fn fn) {
  std::vector<double> cpu, wall;
  cpu.reserve(n);
  wall.reserve(n);
  for (int i = 0; i < n; ++i) {
    const int64_t c0 = Now(CLOCK_THREAD_CPUTIME_ID);
    const int64_t w0 = Now(CLOCK_MONOTONIC);
    fn();
    const int64_t w1 = Now(CLOCK_MONOTONIC);
    const int64_t c1 = Now(CLOCK_THREAD_CPUTIME_ID);
    cpu.push_back(static_cast<double>(c1 - c0));
    wall.push_back(static_cast<double>(w1 - w0));
  }
  Print(what, Summarize(cpu), Summarize(wall));
}

struct TickTimes {
  std::vector<double> plain_cpu, plain_wall, probe_cpu, probe_wall;
  double total_cpu = 0;
};

// Calls `clock.Tick()` `n` times, pausing `pause_us` between calls; a call whose index is a
// multiple of kProbeEveryTicks (counting from the clock's first tick) is a probing tick.
TickTimes RunTicks(atraced::core::CounterClock& clock, int n, int pause_us, int* ticks_so_far) {
  TickTimes t;
  const timespec pause{pause_us / 1'000'000, (pause_us % 1'000'000) * 1000L};
  for (int i = 0; i < n; ++i) {
    if (pause_us > 0) ::nanosleep(&pause, nullptr);
    const int64_t c0 = Now(CLOCK_THREAD_CPUTIME_ID);
    const int64_t w0 = Now(CLOCK_MONOTONIC);
    clock.Tick();
    const int64_t w1 = Now(CLOCK_MONOTONIC);
    const int64_t c1 = Now(CLOCK_THREAD_CPUTIME_ID);
    const bool probe = (++*ticks_so_far % atraced::core::CounterClock::kProbeEveryTicks) == 0;
    (probe ? t.probe_cpu : t.plain_cpu).push_back(static_cast<double>(c1 - c0));
    (probe ? t.probe_wall : t.plain_wall).push_back(static_cast<double>(w1 - w0));
    t.total_cpu += static_cast<double>(c1 - c0);
  }
  return t;
}

void Report(const char* how, const TickTimes& t) {
  std::printf("-- Tick, %s\n", how);
  Print("  ordinary tick", Summarize(t.plain_cpu), Summarize(t.plain_wall));
  Print("  probing tick (per-CPU readings)", Summarize(t.probe_cpu), Summarize(t.probe_wall));
  // The daemon's average tick: one probing tick in every kProbeEveryTicks, at the medians.
  const double k = atraced::core::CounterClock::kProbeEveryTicks;
  const double avg = (Summarize(t.plain_cpu).median * (k - 1) + Summarize(t.probe_cpu).median) / k;
  std::printf("  average tick (medians, 1 probe per %d): %.0f ns cpu -> %.2f ms of daemon CPU per hour at %.0f ticks/h\n",
              atraced::core::CounterClock::kProbeEveryTicks, avg, avg * kTicksPerHour / 1e6, kTicksPerHour);
}

}  // namespace

int main(int argc, char** argv) {
  int ticks = 30000;  // back to back: 200 probing ticks, the history thinned a few times
  int spaced = 600;   // paused: 4 probing ticks
  int pause_us = 2000;
  for (int i = 1; i < argc; ++i) {
    auto value = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", argv[i]);
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (std::strcmp(argv[i], "--ticks") == 0) {
      ticks = value();
    } else if (std::strcmp(argv[i], "--spaced") == 0) {
      spaced = value();
    } else if (std::strcmp(argv[i], "--pause-us") == 0) {
      pause_us = value();
    } else {
      std::fprintf(stderr, "usage: atraced_tick_bench [--ticks N] [--spaced N] [--pause-us U]\n");
      return 2;
    }
  }
  std::printf("kernel clocksource %s; CounterClock::kProbeEveryTicks %d; tick every 2 s\n", Clocksource().c_str(),
              atraced::core::CounterClock::kProbeEveryTicks);

  // The parts, each alone.
  TimeEach("clock read pair (the timer's own cost)", 2000, [] {});
  TimeEach("SampleClocks(true)", 2000, [] { (void)atraced::SampleClocks(true); });
  {
    atraced::core::ClockHistory history;
    TimeEach("ClockHistory::Add(SampleClocks(true))", 2000, [&] { (void)history.Add(atraced::SampleClocks(true)); });
  }
  TimeEach("CounterInstructionRuns (prctl PR_GET_TSC)", 2000, [] { (void)atraced::CounterInstructionRuns(nullptr); });
  TimeEach("CpuSaysCounterInvariant (CPUID)", 2000, [] { (void)atraced::CpuSaysCounterInvariant(); });
  TimeEach("ReadCounterOnEachCpu (the probe)", 50, [] { (void)atraced::core::ReadCounterOnEachCpu(); });

  // The whole tick. The constructor's calibration (20 ms asleep) is not a tick's cost.
  atraced::core::CounterClock clock(nullptr);
  int ticks_so_far = 0;
  const TickTimes hot = RunTicks(clock, ticks, 0, &ticks_so_far);
  Report("back to back", hot);
  const TickTimes cold = RunTicks(clock, spaced, pause_us, &ticks_so_far);
  char how[64];
  std::snprintf(how, sizeof how, "%d us apart", pause_us);
  Report(how, cold);
  std::printf("counter still granted after %d ticks: %s%s%s\n", ticks_so_far, clock.Granted() ? "yes" : "no",
              clock.Granted() ? "" : " - ", clock.why_not().c_str());
  return clock.Granted() ? 0 : 1;
}
