// Counter rings placed through the daemon's clock snapshots (clock_history.h,
// ring_timeline.h) on a simulated machine whose counter can jump forward, step back (a VM
// restored from a snapshot) or change rate (a migration): every record lands within its
// snapshot interval, in ring order, and the save says how many fell in a break.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "atraced/rings/clock_history.h"
#include "atraced/rings/ring_timeline.h"

using atraced::ClockSample;
using atraced::core::ClockHistory;
using atraced::core::ClockSnapshot;
using atraced::core::JudgeInterval;
using atraced::core::RingTimeline;
using atraced::proto::RingRecord;
using atraced::proto::RingSnapshot;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kWallAtMonoZero = 1'700'000'000 * kSec;

// A machine: CLOCK_MONOTONIC in ns, its counter as a function of it. At `event_ns` the
// counter jumps by `jump_ticks` (negative: back) and runs at `ticks_per_ns_after` from then on.
struct Machine {
  double ticks_per_ns = 2.5;  // a 2.5 GHz counter
  int64_t event_ns = std::numeric_limits<int64_t>::max();
  int64_t jump_ticks = 0;
  double ticks_per_ns_after = 2.5;
  int64_t realtime_step_ns = 0;  // CLOCK_REALTIME stepped at `event_ns` too, when set

  uint64_t Counter(int64_t mono) const {
    const uint64_t base = 1'000'000'000'000ull;
    if (mono < event_ns) return base + static_cast<uint64_t>(static_cast<double>(mono) * ticks_per_ns);
    const double before = static_cast<double>(event_ns) * ticks_per_ns;
    const double after = static_cast<double>(mono - event_ns) * ticks_per_ns_after;
    return base + static_cast<uint64_t>(static_cast<int64_t>(before + after) + jump_ticks);
  }
  ClockSample At(int64_t mono) const {
    const int64_t step = mono >= event_ns ? realtime_step_ns : 0;
    return {kWallAtMonoZero + mono + step, mono, Counter(mono)};
  }
};

struct Saved {
  RingTimeline timeline;
  RingSnapshot ring;
  ClockSample now;
  std::vector<ClockSnapshot> history;
};

// A daemon that started at `daemon_start_ns` and sampled every 2 s, a ring made at
// `anchor_ns` holding one record at each of `records_ns` (in ring order), saved at `save_ns`.
Saved Save(const Machine& m, int64_t daemon_start_ns, int64_t anchor_ns, const std::vector<int64_t>& records_ns,
           int64_t save_ns) {
  ClockHistory history;
  for (int64_t t = daemon_start_ns; t < save_ns; t += 2 * kSec) history.Add(m.At(t));
  const ClockSample now = m.At(save_ns);
  history.Add(now);
  Saved s{RingTimeline{}, RingSnapshot{}, now, {}};
  const ClockSample anchor = m.At(anchor_ns);
  s.ring.header_valid = true;
  s.ring.flags = ATR_RING_FLAG_COUNTER;
  s.ring.realtime_ns = static_cast<uint64_t>(anchor.realtime_ns);
  s.ring.monotonic_ns = static_cast<uint64_t>(anchor.monotonic_ns);
  s.ring.counter_anchor = anchor.counter;
  for (size_t i = 0; i < records_ns.size(); ++i) {
    RingRecord r;
    r.index = i;
    r.timestamp_ns = m.Counter(records_ns[i]);
    s.ring.records.push_back(r);
  }
  // As the reader gives them: sorted by stamp, which a step back reorders.
  std::stable_sort(s.ring.records.begin(), s.ring.records.end(),
                   [](const RingRecord& a, const RingRecord& b) { return a.timestamp_ns < b.timestamp_ns; });
  s.history = history.Since(anchor.monotonic_ns);
  s.timeline = RingTimeline::Of(s.ring, s.history, now);
  return s;
}

// Where the save placed the record made at ring index `index`, as CLOCK_MONOTONIC.
int64_t PlacedMono(const Saved& s, uint64_t index) {
  for (size_t i = 0; i < s.ring.records.size(); ++i) {
    if (s.ring.records[i].index == index) return s.timeline.WallNs(i) - (s.now.realtime_ns - s.now.monotonic_ns);
  }
  FAIL("no record " << index);
  return 0;
}

// The daemon's snapshot interval around `mono`: [the last at or before it, the first after].
std::pair<int64_t, int64_t> IntervalAround(const Saved& s, int64_t mono) {
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  for (const ClockSnapshot& h : s.history) {
    if (h.at.monotonic_ns <= mono) lo = std::max(lo, h.at.monotonic_ns);
    if (h.at.monotonic_ns > mono) hi = std::min(hi, h.at.monotonic_ns);
  }
  lo = std::max<int64_t>(lo, static_cast<int64_t>(s.ring.monotonic_ns));
  return {lo, hi};
}

// Records every 300 ms from 1 s to 39.7 s; the ring made at 0.5 s, saved at 40 s.
std::vector<int64_t> Records() {
  std::vector<int64_t> out;
  for (int64_t t = 1 * kSec; t < 40 * kSec; t += 300 * kMs) out.push_back(t);
  return out;
}

// Checks every record: exact (1 µs) outside the break, else within its interval; and the
// placed times in ring order never go back inside the break.
void CheckPlaced(const Saved& s, const std::vector<int64_t>& records, int64_t event_ns) {
  const auto [break_lo, break_hi] = IntervalAround(s, event_ns);
  size_t in_break = 0, at_its_end = 0;  // a record made at the snapshot that ends it may count
  int64_t previous_in_break = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < records.size(); ++i) {
    const int64_t placed = PlacedMono(s, i);
    INFO("record " << i << " made at " << records[i] << " placed at " << placed);
    if (records[i] >= break_lo && records[i] < break_hi) {
      ++in_break;
      CHECK(placed >= break_lo);
      CHECK(placed <= break_hi);
      CHECK(placed >= previous_in_break);
      previous_in_break = placed;
    } else {
      at_its_end += records[i] == break_hi;
      CHECK(std::llabs(placed - records[i]) <= 1000);
    }
  }
  CHECK(s.timeline.placed_in_breaks() >= in_break);
  CHECK(s.timeline.placed_in_breaks() <= in_break + at_its_end);
  CHECK(s.timeline.widest_break_ns() == break_hi - break_lo);
  if (in_break > 0) {
    CHECK(s.timeline.problem().find(std::to_string(s.timeline.placed_in_breaks()) +
                                    " records placed within an interval") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("snapshots: a steady counter places every record to the microsecond, and says nothing") {
  const Machine m;
  const std::vector<int64_t> records = Records();
  const Saved s = Save(m, 0, 500 * kMs, records, 40 * kSec);
  for (size_t i = 0; i < records.size(); ++i) CHECK(std::llabs(PlacedMono(s, i) - records[i]) <= 1000);
  CHECK(s.timeline.placed_in_breaks() == 0);
  CHECK(s.timeline.problem().empty());
}

TEST_CASE("snapshots: a counter that jumps forward (a host suspended and resumed) breaks one interval only") {
  Machine m;
  m.event_ns = 21 * kSec + 100 * kMs;
  m.jump_ticks = 30 * 2'500'000'000ll;  // 30 s of ticks at once
  const std::vector<int64_t> records = Records();
  const Saved s = Save(m, 0, 500 * kMs, records, 40 * kSec);
  CheckPlaced(s, records, m.event_ns);
  CHECK(s.timeline.placed_in_breaks() > 0);
  // The records after the break are not 30 s late: the rate is never carried across it.
  CHECK(std::llabs(PlacedMono(s, records.size() - 1) - records.back()) <= 1000);
}

TEST_CASE("snapshots: a counter that steps back (a VM restored from a snapshot) keeps records in ring order") {
  Machine m;
  m.event_ns = 21 * kSec + 100 * kMs;
  m.jump_ticks = -15 * 2'500'000'000ll;  // back 15 s: later records carry stamps of earlier ones
  const std::vector<int64_t> records = Records();
  const Saved s = Save(m, 0, 500 * kMs, records, 40 * kSec);
  CheckPlaced(s, records, m.event_ns);
  // The file order follows the placed time, which follows the ring's order.
  std::vector<uint64_t> file_order;
  for (size_t i : s.timeline.order()) file_order.push_back(s.ring.records[i].index);
  CHECK(std::is_sorted(file_order.begin(), file_order.end()));
}

TEST_CASE("snapshots: a counter that changes rate (a migration) is placed by each side's own rate") {
  Machine m;
  m.event_ns = 15 * kSec + 700 * kMs;
  m.ticks_per_ns_after = 3.1;
  const std::vector<int64_t> records = Records();
  const Saved s = Save(m, 0, 500 * kMs, records, 40 * kSec);
  CheckPlaced(s, records, m.event_ns);
}

TEST_CASE("snapshots: a ring made before the daemon started is placed through the new daemon's snapshots") {
  // The ring's anchor at 0.5 s; this daemon started at 20 s (a restart); its rings' records
  // from before its start are placed by the interval from the ring's anchor to its first
  // snapshot, judged by the rate it measured.
  const Machine m;
  const std::vector<int64_t> records = Records();
  const Saved s = Save(m, 20 * kSec, 500 * kMs, records, 40 * kSec);
  for (size_t i = 0; i < records.size(); ++i) CHECK(std::llabs(PlacedMono(s, i) - records[i]) <= 1000);
  CHECK(s.timeline.problem().empty());
  // The same across a step back before the restart: the anchor's interval is the break.
  Machine restored;
  restored.event_ns = 10 * kSec;
  restored.jump_ticks = -5 * 2'500'000'000ll;
  const Saved r = Save(restored, 20 * kSec, 500 * kMs, records, 40 * kSec);
  for (size_t i = 0; i < records.size(); ++i) {
    INFO("record " << i);
    if (records[i] >= 20 * kSec) CHECK(std::llabs(PlacedMono(r, i) - records[i]) <= 1000);
    else CHECK(PlacedMono(r, i) <= 20 * kSec);
  }
  CHECK(r.timeline.placed_in_breaks() > 0);
  CHECK(r.timeline.widest_break_ns() == 20 * kSec - 500 * kMs);
}

TEST_CASE("snapshots: CLOCK_REALTIME stepped after the ring was made: placed at the wall time as it reads now") {
  Machine m;
  m.event_ns = 12 * kSec;
  m.realtime_step_ns = 37 * kSec;  // NTP stepped; the counter and CLOCK_MONOTONIC did not
  const std::vector<int64_t> records = Records();
  const Saved s = Save(m, 0, 500 * kMs, records, 40 * kSec);
  CHECK(s.timeline.problem().empty());
  for (size_t i = 0; i < s.ring.records.size(); ++i) {
    const int64_t made = records[s.ring.records[i].index];
    CHECK(std::llabs(s.timeline.WallNs(i) - (kWallAtMonoZero + 37 * kSec + made)) <= 1000);
  }
}

TEST_CASE("snapshots: the history judges each interval against the rate measured before it") {
  const Machine m;
  const ClockSample a = m.At(10 * kSec), b = m.At(12 * kSec);
  CHECK(JudgeInterval(a, b, 2.5).empty());
  // CLOCK_MONOTONIC slewed by NTP (500 ppm) is not a break.
  ClockSample slewed = b;
  slewed.monotonic_ns += 2 * kSec / 2000;
  CHECK(JudgeInterval(a, slewed, 2.5).empty());
  // 5 ms off in 2 s is.
  ClockSample ahead = b;
  ahead.counter += 5 * 2'500'000;
  CHECK(JudgeInterval(a, ahead, 2.5).find("ahead of its rate") != std::string::npos);
  ClockSample back = b;
  back.counter = a.counter - 10;
  CHECK(JudgeInterval(a, back, 2.5).find("went back 10 ticks") != std::string::npos);
  // No rate yet: only a step back is judged.
  CHECK(JudgeInterval(a, ahead, 0).empty());
  CHECK(!JudgeInterval(a, back, 0).empty());
}

TEST_CASE("snapshots: the history marks a break, measures the rate anew after it, and thins without forgetting") {
  Machine m;
  m.event_ns = 9 * kSec;
  m.ticks_per_ns_after = 3.0;
  ClockHistory h(8);
  std::vector<std::string> verdicts;
  for (int64_t t = 0; t <= 40 * kSec; t += 2 * kSec) verdicts.push_back(h.Add(m.At(t)));
  // The interval 8 s -> 10 s changed rate: one verdict; after it the new rate holds.
  size_t breaks = 0;
  for (const std::string& v : verdicts) breaks += !v.empty();
  CHECK(breaks == 1);
  CHECK(!verdicts[5].empty());
  CHECK(h.size() <= 8);
  const std::vector<ClockSnapshot> all = h.Since(std::numeric_limits<int64_t>::min());
  REQUIRE(!all.empty());
  CHECK(std::fabs(all.back().ticks_per_ns - 3.0) < 1e-6);
  // Thinned: the interval holding 9 s is still marked, wherever its ends now are.
  bool marked = false;
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i - 1].at.monotonic_ns <= 9 * kSec && all[i].at.monotonic_ns > 9 * kSec) marked = all[i].break_before;
  }
  CHECK(marked);
  // A sample older than the newest (another thread's) is not kept.
  CHECK(h.Add(m.At(1 * kSec)).empty());
  CHECK(h.Since(std::numeric_limits<int64_t>::min()).back().at.monotonic_ns == 40 * kSec);
  // Since: the snapshot at or before the time asked, then every later one.
  const std::vector<ClockSnapshot> since = h.Since(39 * kSec);
  REQUIRE(since.size() == 2);
  CHECK(since.front().at.monotonic_ns == 38 * kSec);
}
