// Ring stamps to wall time (ring_timeline.h), with clocks chosen by the test: a save, a
// daemon restart, a ring hours old with CLOCK_REALTIME stepped, hostile anchors.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "atraced/rings/ring_format.h"
#include "atraced/rings/ring_timeline.h"

using atraced::ClockSample;
using atraced::core::RingTimeline;
using atraced::proto::RingSnapshot;

namespace {

constexpr int64_t kSec = 1000000000;
constexpr int64_t kCreatedWall = 1700000000 * kSec;  // the ring's realtime anchor
constexpr int64_t kCreatedMono = 5000 * kSec;
constexpr uint64_t kCreatedTicks = 123456789012345ull;

// A counter of `hz` ticks per second that read kCreatedTicks at kCreatedMono.
struct Counter {
  double hz;
  uint64_t At(int64_t mono_ns) const {
    return kCreatedTicks + static_cast<uint64_t>(static_cast<double>(mono_ns - kCreatedMono) * hz / 1e9);
  }
};

RingSnapshot CounterRing() {
  RingSnapshot s;
  s.header_valid = true;
  s.flags = ATR_RING_FLAG_COUNTER;
  s.realtime_ns = kCreatedWall;
  s.monotonic_ns = kCreatedMono;
  s.counter_anchor = kCreatedTicks;
  return s;
}

// The daemon's clocks `after_ns` after the ring was made, realtime stepped by `step_ns`.
ClockSample Now(const Counter& c, int64_t after_ns, int64_t step_ns = 0) {
  return {kCreatedWall + after_ns + step_ns, kCreatedMono + after_ns, c.At(kCreatedMono + after_ns)};
}

// The ring `s` with one record stamped `stamp` added, placed at a save at `now`.
struct Placed {
  RingTimeline t;
  int64_t wall;
  int64_t since;
};
Placed Place(RingSnapshot s, const ClockSample& now, uint64_t stamp) {
  atraced::proto::RingRecord r;
  r.timestamp_ns = stamp;
  s.records.push_back(r);
  RingTimeline t = RingTimeline::Of(s, now);
  const int64_t wall = t.WallNs(0), since = t.SinceAnchorNs(0);
  return {std::move(t), wall, since};
}

}  // namespace

TEST_CASE("timeline: a monotonic ring is placed from its header, whatever the save's clocks") {
  RingSnapshot s;
  s.header_valid = true;
  s.realtime_ns = kCreatedWall;
  s.monotonic_ns = kCreatedMono;
  const ClockSample save{kCreatedWall + 999 * kSec, 1, 2};
  const Placed p = Place(s, save, kCreatedMono + 1500);
  CHECK(p.t.anchor_wall_ns() == kCreatedWall);
  CHECK(p.wall == kCreatedWall + 1500);
  CHECK(Place(s, save, kCreatedMono - 10).since == -10);
  CHECK(p.t.problem().empty());
}

TEST_CASE("timeline: counter stamps at 2.5 GHz are placed to the nanosecond at a save") {
  const Counter c{2.5e9};
  for (int64_t at : {int64_t{0}, int64_t{1}, 3 * kSec + 7, 10 * kSec}) {
    INFO(at);
    const Placed p = Place(CounterRing(), Now(c, 10 * kSec), c.At(kCreatedMono + at));
    CHECK(p.t.problem().empty());
    CHECK(p.t.anchor_wall_ns() == kCreatedWall);
    CHECK(std::llabs(p.wall - (kCreatedWall + at)) <= 1);
    CHECK(std::llabs(p.since - at) <= 1);
  }
}

TEST_CASE("timeline: the rate is measured, not assumed: 1 GHz, 24 MHz (aarch64's timer), 3.7 GHz") {
  for (double hz : {1e9, 24e6, 3.7e9}) {
    INFO(hz);
    const Counter c{hz};
    // A 24 MHz tick is 41.7 ns: the placement is as exact as the counter.
    const int64_t tolerance = static_cast<int64_t>(1e9 / hz) + 1;
    const Placed p = Place(CounterRing(), Now(c, 60 * kSec), c.At(kCreatedMono + 45 * kSec + 123456));
    CHECK(std::llabs(p.wall - (kCreatedWall + 45 * kSec + 123456)) <= tolerance);
  }
}

TEST_CASE("timeline: a daemon restart between two saves places a record the same") {
  // Two daemons, 40 s apart, the second with no snapshot older than its start, agree.
  const Counter c{2.1e9};
  const uint64_t stamp = c.At(kCreatedMono + 7 * kSec);
  const Placed first = Place(CounterRing(), Now(c, 8 * kSec), stamp);
  const Placed after_restart = Place(CounterRing(), Now(c, 48 * kSec), stamp);
  CHECK(std::llabs(first.wall - after_restart.wall) <= 1);
  CHECK(std::llabs(first.wall - (kCreatedWall + 7 * kSec)) <= 1);
}

TEST_CASE("timeline: a ring hours old, CLOCK_REALTIME stepped after it was made: ages count from now") {
  // The process ran for 5 hours; NTP stepped the wall clock forward 37 s after the ring was
  // made. A record 2 s before the save happened at the wall time the clock shows now minus
  // 2 s. The header's anchor alone would place it 37 s early.
  const Counter c{2.5e9};
  const int64_t five_hours = 5 * 3600 * kSec;
  const int64_t step = 37 * kSec;
  const ClockSample now = Now(c, five_hours, step);
  const uint64_t stamp = c.At(kCreatedMono + five_hours - 2 * kSec);
  CHECK(std::llabs(Place(CounterRing(), now, stamp).wall - (now.realtime_ns - 2 * kSec)) <= 1);
  // The counter drifting from CLOCK_MONOTONIC (NTP slews the latter by up to 500 ppm): the
  // rate measured over the interval follows it, and a recent record stays within the drift
  // over its own age, not over the ring's.
  ClockSample slewed = now;
  slewed.monotonic_ns = kCreatedMono + five_hours + five_hours / 2000;  // monotonic ran 500 ppm fast
  CHECK(std::llabs(Place(CounterRing(), slewed, stamp).wall - (now.realtime_ns - 2 * kSec)) <= 2 * kSec / 2000 + 1);
}

TEST_CASE("timeline: an anchor ahead of the daemon's counter places records at the ring's creation") {
  const Counter c{2.5e9};
  RingSnapshot ahead = CounterRing();
  ahead.counter_anchor = c.At(kCreatedMono + 100 * kSec);  // a lying header
  const Placed p = Place(ahead, Now(c, 10 * kSec), c.At(kCreatedMono + 5 * kSec));
  CHECK(p.t.problem().find("counter anchor") != std::string::npos);
  CHECK(p.wall == kCreatedWall);
  RingSnapshot frozen = CounterRing();
  frozen.monotonic_ns = kCreatedMono + 20 * kSec;  // created "after" the save
  CHECK(!RingTimeline::Of(frozen, Now(c, 10 * kSec)).problem().empty());
}

TEST_CASE("timeline: hostile stamps are placed between the anchor's past and the save, never overflowing") {
  const Counter c{2.5e9};
  const ClockSample now = Now(c, 10 * kSec);
  // After the save: at the save.
  CHECK(Place(CounterRing(), now, kCreatedTicks + (1ull << 62)).wall == now.realtime_ns);
  // More than 2^63 ticks away reads as behind the anchor (counters are compared modulo
  // 2^64): somewhere between the epoch and the save, never an overflow.
  const int64_t far = Place(CounterRing(), now, std::numeric_limits<uint64_t>::max()).wall;
  CHECK(far >= 0);
  CHECK(far <= now.realtime_ns);
  // Before the anchor: extrapolated back, clamped at the epoch.
  CHECK(Place(CounterRing(), now, kCreatedTicks - (1ull << 62)).wall == 0);
  CHECK(Place(CounterRing(), now, kCreatedTicks - 2'500'000'000ull).wall == kCreatedWall - kSec);
  RingSnapshot tiny = CounterRing();
  tiny.monotonic_ns = 0;  // a rate of one tick in 5000 s cannot overflow the product either
  const ClockSample one_tick{kCreatedWall, 5000 * kSec, kCreatedTicks + 1};
  CHECK(Place(tiny, one_tick, kCreatedTicks + 1).since == 5000 * kSec);
  CHECK(Place(tiny, one_tick, kCreatedTicks - (1ull << 62)).since == std::numeric_limits<int64_t>::min());
}

TEST_CASE("timeline: a counter ring's .bin has the wall time of its anchor as of now, cycles in ns") {
  const Counter c{3e9};
  RingSnapshot s = CounterRing();
  s.msg_num = 8;
  s.msg_size = 64;
  const std::string text = "abc";
  atraced::proto::RingRecord r;
  r.timestamp_ns = c.At(kCreatedMono + 2 * kSec);
  r.data = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  s.records.push_back(r);
  const int64_t step = 5 * kSec;
  const RingTimeline t = RingTimeline::Of(s, Now(c, 4 * kSec, step));
  CHECK(t.problem().empty());
  const std::vector<atraced::proto::RingStructEntry> structs(1);
  const auto b = atraced::core::FormatRingBinary(s, t, structs, 0);
  REQUIRE(b.size() > 48 + 80 + 16 + 8);
  uint64_t header_time = 0, cycle = 0;
  std::memcpy(&header_time, b.data() + 24, 8);
  std::memcpy(&cycle, b.data() + 48 + 80 + 16, 8);
  CHECK(header_time == static_cast<uint64_t>(kCreatedWall + step));
  CHECK(std::llabs(static_cast<int64_t>(cycle) - 2 * kSec) <= 1);
  // The .txt of the same ring agrees with it.
  CHECK(atraced::core::FormatRingText(s, t, 0).rfind(atraced::core::FormatLineTime(kCreatedWall + step + 2 * kSec), 0) ==
        0);
}
