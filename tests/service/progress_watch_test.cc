// The hang watch's judgement on its own: a fake clock, made-up write positions and CPU times.
#include <catch2/catch.hpp>

#include <map>

#include "atraced/service/progress_watch.h"
#include "support/fake_clock.h"

using namespace atraced;
using namespace std::chrono_literals;
using Key = ProgressWatch::Key;
using Sample = ProgressWatch::Sample;

namespace {

struct Fixture {
  atraced::testing::FakeClock clock;
  std::map<int32_t, std::optional<std::chrono::milliseconds>> cpu;  // by pid; absent: unreadable
  int cpu_reads = 0;
  ProgressWatch watch{[this](const Key& k) -> std::optional<std::chrono::milliseconds> {
    ++cpu_reads;
    auto it = cpu.find(k.pid);
    return it == cpu.end() ? std::nullopt : it->second;
  }};

  // Ticks every 2 s (the daemon's) for `span`, the samples unchanged; the stalls reported.
  std::vector<ProgressWatch::Stall> Run(std::chrono::milliseconds span, const std::vector<Sample>& samples) {
    std::vector<ProgressWatch::Stall> all;
    for (auto t = 0ms; t < span; t += 2s) {
      clock.Advance(2s);
      for (auto& s : watch.Observe(clock.Now(), samples)) all.push_back(s);
    }
    return all;
  }
};

}  // namespace

TEST_CASE("a process whose rings stand still for its timeout is stalled once, blocked without CPU time",
          "[progress_watch]") {
  Fixture f;
  f.cpu[10] = 500ms;
  const std::vector<Sample> samples{{{10, 77}, 42, 10s}};
  CHECK(f.watch.Observe(f.clock.Now(), samples).empty());  // first seen: the wait starts now
  CHECK(f.Run(8s, samples).empty());                       // 8 s still: not yet
  CHECK_FALSE(f.watch.Stalled({10, 77}));
  const auto stalls = f.Run(4s, samples);                  // 10 s and more
  REQUIRE(stalls.size() == 1);
  CHECK(stalls[0].key == Key{10, 77});
  CHECK(stalls[0].stalled_for >= 10s);
  CHECK(stalls[0].stalled_for <= 12s);
  CHECK_FALSE(stalls[0].busy);
  CHECK(stalls[0].cpu_used == 0ms);
  CHECK(f.watch.Stalled({10, 77}));
  // Reported once: however long it stays still, no second report.
  CHECK(f.Run(60s, samples).empty());
}

// A process standing still with a timeout of 6 s that uses `per_tick` of CPU time every
// 2 s tick: its stall as reported.
std::vector<ProgressWatch::Stall> StallUsing(std::chrono::milliseconds per_tick) {
  Fixture f;
  const std::vector<Sample> samples{{{10, 77}, 42, 6s}};
  f.cpu[10] = 1000ms;
  CHECK(f.watch.Observe(f.clock.Now(), samples).empty());
  std::vector<ProgressWatch::Stall> stalls;
  for (int i = 0; i < 5 && stalls.empty(); ++i) {
    f.clock.Advance(2s);
    stalls = f.watch.Observe(f.clock.Now(), samples);
    f.cpu[10] = *f.cpu[10] + per_tick;
  }
  // What list --live shows of it agrees with the report.
  const ProgressWatch::View v = f.watch.Look({10, 77}, f.clock.Now());
  CHECK(v.stalled == !stalls.empty());
  CHECK(v.busy == (!stalls.empty() && stalls[0].busy));
  return stalls;
}

TEST_CASE("a stalled process that burns CPU time is busy", "[progress_watch]") {
  const auto stalls = StallUsing(200ms);  // a spinning thread on a loaded host: a tenth of a CPU
  REQUIRE(stalls.size() == 1);
  CHECK(stalls[0].busy);
  CHECK(*stalls[0].cpu_used >= 200ms);
}

TEST_CASE("a stalled process with a timer thread's trickle of CPU time is blocked", "[progress_watch]") {
  const auto stalls = StallUsing(20ms);  // 1% of a CPU: a heartbeat, a watchdog
  REQUIRE(stalls.size() == 1);
  CHECK_FALSE(stalls[0].busy);
  CHECK(*stalls[0].cpu_used >= 20ms);
}

TEST_CASE("rings that advance keep a process from being judged, and after a stall make it judged again",
          "[progress_watch]") {
  Fixture f;
  f.cpu[10] = 0ms;
  uint64_t written = 1;
  for (int i = 0; i < 30; ++i) {  // a record every tick for a minute: never stalled
    f.clock.Advance(2s);
    CHECK(f.watch.Observe(f.clock.Now(), std::vector<Sample>{{{10, 1}, written++, 4s}}).empty());
  }
  // Moving processes cost no /proc read.
  CHECK(f.cpu_reads == 0);
  REQUIRE(f.Run(10s, {{{10, 1}, written, 4s}}).size() == 1);
  // It moves once: the stall is over, and a new one is reported again.
  ++written;
  f.clock.Advance(2s);
  CHECK(f.watch.Observe(f.clock.Now(), std::vector<Sample>{{{10, 1}, written, 4s}}).empty());
  CHECK_FALSE(f.watch.Stalled({10, 1}));
  CHECK(f.Run(10s, {{{10, 1}, written, 4s}}).size() == 1);
}

TEST_CASE("a process that rests a few ticks between records costs no /proc read", "[progress_watch]") {
  Fixture f;
  f.cpu[10] = 0ms;
  uint64_t written = 1;
  for (int i = 0; i < 60; ++i) {  // a record every third tick (6 s) under a 20 s timeout
    f.clock.Advance(2s);
    if (i % 3 == 0) ++written;
    CHECK(f.watch.Observe(f.clock.Now(), std::vector<Sample>{{{10, 1}, written, 20s}}).empty());
  }
  CHECK(f.cpu_reads == 0);
}

TEST_CASE("a process dumped with its job is not reported until its rings move", "[progress_watch]") {
  Fixture f;
  f.cpu[10] = 0ms;
  const std::vector<Sample> samples{{{10, 1}, 9, 6s}};
  f.watch.Observe(f.clock.Now(), samples);
  f.Run(2s, samples);
  f.watch.Captured({10, 1});  // another rank stalled first; this one was dumped with it
  CHECK(f.watch.Stalled({10, 1}));
  CHECK(f.Run(30s, samples).empty());
  f.clock.Advance(2s);
  f.watch.Observe(f.clock.Now(), std::vector<Sample>{{{10, 1}, 10, 6s}});
  CHECK(f.Run(10s, {{{10, 1}, 10, 6s}}).size() == 1);
  f.watch.Captured({99, 1});  // not watched: nothing happens
  CHECK(f.watch.watched() == 1);
}

TEST_CASE("a process that never wrote a record is not judged", "[progress_watch]") {
  Fixture f;
  f.cpu[10] = 0ms;
  CHECK(f.Run(600s, {{{10, 1}, 0, 2s}}).empty());
  CHECK(f.watch.StillFor({10, 1}, f.clock.Now()) == 0ms);
  CHECK(f.cpu_reads == 0);
}

TEST_CASE("each process has its own timeout, and a reused pid is another process", "[progress_watch]") {
  Fixture f;
  f.cpu[10] = 0ms;
  f.cpu[11] = 0ms;
  std::vector<Sample> samples{{{10, 1}, 5, 4s}, {{11, 1}, 5, 60s}};
  f.watch.Observe(f.clock.Now(), samples);
  const auto stalls = f.Run(10s, samples);
  REQUIRE(stalls.size() == 1);
  CHECK(stalls[0].key.pid == 10);
  // Pid 10 again, with another start time: a new process, whose wait starts now.
  samples[0].key.start_ticks = 2;
  CHECK(f.Run(2s, samples).empty());
  CHECK_FALSE(f.watch.Stalled({10, 2}));
  CHECK(f.watch.watched() == 2);  // the old pid 10 was forgotten
}

TEST_CASE("a process that left is forgotten, and one whose CPU time cannot be read is still judged, blocked",
          "[progress_watch]") {
  Fixture f;  // no CPU time for anyone: /proc says nothing
  std::vector<Sample> samples{{{10, 1}, 3, 4s}, {{12, 1}, 3, 4s}};
  f.watch.Observe(f.clock.Now(), samples);
  samples.pop_back();
  const auto stalls = f.Run(8s, samples);
  REQUIRE(stalls.size() == 1);
  CHECK_FALSE(stalls[0].busy);
  CHECK_FALSE(stalls[0].cpu_used);
  CHECK(f.watch.watched() == 1);
}

TEST_CASE("a clock stepped back restarts the wait instead of judging", "[progress_watch]") {
  Fixture f;
  f.cpu[10] = 0ms;
  const std::vector<Sample> samples{{{10, 1}, 3, 10s}};
  f.watch.Observe(f.clock.Now(), samples);
  f.Run(6s, samples);
  f.clock.Advance(-1h);
  CHECK(f.watch.Observe(f.clock.Now(), samples).empty());
  CHECK(f.Run(8s, samples).empty());  // 8 s since the step: not yet 10
  CHECK(f.Run(4s, samples).size() == 1);
}

TEST_CASE("a process sampled with timeout 0 is tracked for list --live but never judged and costs no /proc read",
          "[progress_watch][list_live]") {
  Fixture f;
  f.cpu[10] = 0ms;
  std::vector<Sample> samples{{{10, 77}, 5, 0ms}};
  const auto first = f.clock.Now();
  CHECK(f.watch.Observe(first, samples).empty());
  CHECK(f.Run(120s, samples).empty());  // still for an age: not watched, never reported
  CHECK(f.cpu_reads == 0);
  const ProgressWatch::View v = f.watch.Look({10, 77}, f.clock.Now());
  CHECK(v.known);
  CHECK_FALSE(v.never_wrote);
  CHECK(v.moved == first);  // first seen: the wait's start
  CHECK(v.still >= 120s);
  CHECK_FALSE(v.stalled);
  CHECK_FALSE(v.captured);
  // It writes: the time it moved is this tick's.
  samples[0].written = 6;
  f.clock.Advance(2s);
  f.watch.Observe(f.clock.Now(), samples);
  CHECK(f.watch.Look({10, 77}, f.clock.Now()).moved == f.clock.Now());
  CHECK(f.watch.Look({10, 77}, f.clock.Now()).still == 0ms);
  // Never sampled: nothing known.
  CHECK_FALSE(f.watch.Look({11, 1}, f.clock.Now()).known);
}

TEST_CASE("Look tells a stalled process's verdict, busy or blocked, from a captured one's, until its rings move",
          "[progress_watch][list_live]") {
  Fixture f;
  f.cpu[10] = 0ms;  // blocked
  f.cpu[20] = 0ms;  // its job's other process, captured
  std::vector<Sample> samples{{{10, 1}, 5, 6s}, {{20, 2}, 9, 6s}};
  f.watch.Observe(f.clock.Now(), samples);
  const auto stalls = f.Run(10s, samples);
  REQUIRE(stalls.size() == 2);
  f.watch.Captured({10, 1});  // as HangWatch marks every process it dumps
  f.watch.Captured({20, 2});
  auto stalled = f.watch.Look({10, 1}, f.clock.Now());
  CHECK(stalled.stalled);
  CHECK_FALSE(stalled.busy);
  CHECK_FALSE(stalled.captured);
  // A process captured with its job without a verdict of its own says so.
  Fixture g;
  g.cpu[1] = 0ms;
  std::vector<Sample> one{{{1, 1}, 5, 6s}, {{2, 2}, 5, 6s}};
  g.watch.Observe(g.clock.Now(), one);
  g.clock.Advance(2s);
  g.watch.Observe(g.clock.Now(), one);
  g.watch.Captured({2, 2});
  const auto captured = g.watch.Look({2, 2}, g.clock.Now());
  CHECK(captured.captured);
  CHECK_FALSE(captured.stalled);
  // Its rings move: the verdict is gone.
  samples[0].written = 6;
  f.clock.Advance(2s);
  f.watch.Observe(f.clock.Now(), samples);
  const auto moved = f.watch.Look({10, 1}, f.clock.Now());
  CHECK_FALSE(moved.stalled);
  CHECK_FALSE(moved.captured);
}
