#include "atraced/rings/ring_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "atraced/base/cycle_counter.h"

namespace atraced::core {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

int64_t Saturate(__int128 v) { return v > kMax ? kMax : v < kMin ? kMin : static_cast<int64_t>(v); }
int64_t Saturate(double v) {
  if (std::isnan(v)) return 0;
  return v >= 9.2e18 ? kMax : v <= -9.2e18 ? kMin : static_cast<int64_t>(v);
}
// a - b for counters, as a signed distance (a counter that wrapped or stepped back is negative).
int64_t Ticks(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b); }

// One point of the counter-to-monotonic map.
struct Point {
  int64_t mono;
  uint64_t counter;
  double rate;  // ticks per ns measured up to here; 0 unknown
  bool broken_before;
};

// The map: the ring's anchor, the daemon's snapshots after it, the save's sample.
class CounterMap {
 public:
  CounterMap(const proto::RingSnapshot& snap, std::span<const ClockSnapshot> history, const ClockSample& now) {
    points_.push_back({static_cast<int64_t>(snap.monotonic_ns), snap.counter_anchor, 0, false});
    const ClockSnapshot* before_anchor = nullptr;
    for (const ClockSnapshot& h : history) {
      if (h.at.monotonic_ns <= points_.front().mono) {
        before_anchor = &h;
        continue;
      }
      if (h.at.monotonic_ns > now.monotonic_ns) break;
      points_.push_back({h.at.monotonic_ns, h.at.counter, h.ticks_per_ns, h.break_before});
    }
    if (points_.back().mono < now.monotonic_ns) {
      const double rate = points_.size() > 1 ? points_.back().rate : 0;
      const bool broken = points_.size() > 1 && !JudgeInterval(Sample(points_.back()), now, rate).empty();
      points_.push_back({now.monotonic_ns, now.counter, rate, broken});
    }
    for (const Point& p : points_) {
      if (p.rate > 0) {
        fallback_rate_ = p.rate;
        break;
      }
    }
    if (fallback_rate_ <= 0) {
      const int64_t dm = points_.back().mono - points_.front().mono;
      const int64_t dc = Ticks(points_.back().counter, points_.front().counter);
      fallback_rate_ = dm > 0 && dc > 0 ? static_cast<double>(dc) / static_cast<double>(dm) : 1.0;
    }
    // The anchor's interval is judged here: the daemon never saw the anchor. The rate that
    // applies is the one measured before the first snapshot's break, else after it.
    if (points_.size() > 2) {
      double rate = before_anchor != nullptr && points_[1].broken_before ? before_anchor->ticks_per_ns : 0;
      if (rate <= 0) rate = RateFrom(1);
      points_[1].broken_before = !JudgeInterval(Sample(points_[0]), Sample(points_[1]), rate).empty();
    } else if (points_.size() == 2) {
      points_[1].broken_before = Ticks(points_[1].counter, points_[0].counter) <= 0;
    }
    for (size_t k = 0; k + 1 < points_.size(); ++k) {
      if (Ticks(points_[k + 1].counter, points_[k].counter) < 0) run_starts_.push_back(k + 1);
    }
  }

  size_t intervals() const { return points_.size() - 1; }
  const Point& at(size_t k) const { return points_[k]; }
  bool Broken(size_t k) const { return points_[k + 1].broken_before; }
  bool SteppedBack(size_t k) const { return Ticks(points_[k + 1].counter, points_[k].counter) < 0; }
  double RateAt(size_t k) const { return points_[k].rate > 0 ? points_[k].rate : fallback_rate_; }
  // The monotone run containing interval k: [first point, last point].
  size_t RunFirst(size_t k) const {
    auto it = std::upper_bound(run_starts_.begin(), run_starts_.end(), k);
    return it == run_starts_.begin() ? 0 : *(it - 1);
  }
  size_t RunLast(size_t k) const {
    auto it = std::upper_bound(run_starts_.begin(), run_starts_.end(), k);
    return it == run_starts_.end() ? points_.size() - 1 : *it - 1;
  }

 private:
  static ClockSample Sample(const Point& p) { return {0, p.mono, p.counter}; }
  double RateFrom(size_t k) const {
    for (size_t i = k; i < points_.size(); ++i) {
      if (points_[i].rate > 0) return points_[i].rate;
    }
    return 0;
  }

  std::vector<Point> points_;
  std::vector<size_t> run_starts_;  // points where the counter stepped back from the one before
  double fallback_rate_ = 0;
};

}  // namespace

RingTimeline RingTimeline::Of(const proto::RingSnapshot& snap, std::span<const ClockSnapshot> history,
                              const ClockSample& now) {
  RingTimeline t;
  const size_t n = snap.records.size();
  t.since_anchor_ns_.resize(n);
  if (!(snap.flags & ATR_RING_FLAG_COUNTER)) {
    t.anchor_wall_ns_ = static_cast<int64_t>(snap.realtime_ns);
    for (size_t i = 0; i < n; ++i) t.since_anchor_ns_[i] = Ticks(snap.records[i].timestamp_ns, snap.monotonic_ns);
  } else {
    t.PlaceCounterRecords(snap, history, now);
  }
  t.order_.resize(n);
  std::iota(t.order_.begin(), t.order_.end(), size_t{0});
  std::stable_sort(t.order_.begin(), t.order_.end(), [&](size_t a, size_t b) {
    if (t.since_anchor_ns_[a] != t.since_anchor_ns_[b]) return t.since_anchor_ns_[a] < t.since_anchor_ns_[b];
    return snap.records[a].index < snap.records[b].index;
  });
  return t;
}

void RingTimeline::PlaceCounterRecords(const proto::RingSnapshot& snap, std::span<const ClockSnapshot> history,
                                       const ClockSample& now) {
  const size_t n = snap.records.size();
  const auto anchor_mono = static_cast<int64_t>(snap.monotonic_ns);
  const int64_t elapsed_ns = Saturate(static_cast<__int128>(now.monotonic_ns) - anchor_mono);
  if (elapsed_ns <= 0 || (history.empty() && Ticks(now.counter, snap.counter_anchor) <= 0)) {
    // A header that lies about when the ring was made: nothing to measure against.
    anchor_wall_ns_ = static_cast<int64_t>(snap.realtime_ns);
    problem_ = "ring header: counter anchor " + std::to_string(snap.counter_anchor) + " at monotonic " +
               std::to_string(snap.monotonic_ns) + " is not before the daemon's " + std::to_string(now.counter) +
               " at " + std::to_string(now.monotonic_ns) + ": records placed at the ring's creation";
    return;
  }
  anchor_wall_ns_ = Saturate(static_cast<__int128>(now.realtime_ns) - elapsed_ns);
  const CounterMap map(snap, history, now);

  // Ring order, not stamp order: across a counter that stepped back, stamps do not sort.
  std::vector<size_t> ring_order(n);
  std::iota(ring_order.begin(), ring_order.end(), size_t{0});
  std::stable_sort(ring_order.begin(), ring_order.end(),
                   [&](size_t a, size_t b) { return snap.records[a].index < snap.records[b].index; });

  size_t cursor = 0;              // the interval the last record was placed in; only moves on
  int64_t last_in_break = kMin;   // records in a break keep ring order
  size_t last_break = SIZE_MAX;
  for (size_t i : ring_order) {
    const uint64_t s = snap.records[i].timestamp_ns;
    int64_t mono = 0;
    size_t placed_in = SIZE_MAX;
    bool before_anchor = false;
    // Find the interval of s: in the cursor's monotone run (a record a little out of stamp
    // order among threads goes back within it), else in the interval of a step back next
    // to it, else in a later run. The cursor never moves back a run.
    auto near = [&](size_t step) {
      const Point& a = map.at(step);
      const Point& b = map.at(step + 1);
      const auto width = static_cast<double>(b.mono - a.mono);
      const int64_t after_a = Ticks(s, a.counter), before_b = Ticks(b.counter, s);
      return (after_a >= 0 && static_cast<double>(after_a) / map.RateAt(step) <= width) ||
             (before_b >= 0 && static_cast<double>(before_b) / map.RateAt(step + 1) <= width);
    };
    for (size_t k = cursor; k < map.intervals();) {
      if (map.SteppedBack(k)) {
        if (near(k)) {
          placed_in = k;  // just before or after the step
          break;
        }
        ++k;  // the next run
        continue;
      }
      const size_t first = map.RunFirst(k), last = map.RunLast(k);
      if (Ticks(s, map.at(first).counter) >= 0 && Ticks(map.at(last).counter, s) >= 0) {
        size_t a = first, b = last;  // invariant: counter(a) <= s <= counter(b)
        while (b - a > 1) {
          const size_t m = a + (b - a) / 2;
          (Ticks(s, map.at(m).counter) >= 0 ? a : b) = m;
        }
        placed_in = a;
        break;
      }
      if (Ticks(s, map.at(first).counter) < 0) {
        if (first == 0) {
          before_anchor = true;
          break;
        }
        if (near(first - 1)) {
          placed_in = first - 1;  // just after the step back this run began with
          break;
        }
      }
      k = last;  // the step back this run ends with, or the end: after the save
    }
    if (placed_in == SIZE_MAX) {
      if (before_anchor) {
        // Before the anchor (only a hostile ring): extrapolated back at the first rate.
        mono = Saturate(static_cast<double>(anchor_mono) -
                        static_cast<double>(Ticks(map.at(0).counter, s)) / map.RateAt(0));
      } else {
        mono = map.at(map.intervals()).mono;  // after the save (only a hostile ring): at the save
      }
    } else {
      cursor = std::max(cursor, placed_in);
      const Point& a = map.at(placed_in);
      const Point& b = map.at(placed_in + 1);
      const int64_t width = b.mono - a.mono;
      const int64_t dc = Ticks(b.counter, a.counter);
      if (!map.Broken(placed_in) && dc > 0) {
        mono = a.mono + Saturate(static_cast<__int128>(Ticks(s, a.counter)) * width / dc);
      } else {
        // A break: placed by the nearer side's rate, within the interval, in ring order.
        const int64_t after_a = Ticks(s, a.counter);
        const int64_t before_b = Ticks(b.counter, s);
        if (after_a >= 0 && (before_b < 0 || after_a <= before_b)) {
          mono = a.mono + Saturate(static_cast<double>(after_a) / map.RateAt(placed_in));
        } else {
          mono = b.mono - Saturate(static_cast<double>(std::max<int64_t>(before_b, 0)) / map.RateAt(placed_in + 1));
        }
        mono = std::clamp(mono, a.mono, b.mono);
        if (last_break == placed_in) mono = std::max(mono, last_in_break);
        last_break = placed_in;
        last_in_break = mono;
        ++placed_in_breaks_;
        widest_break_ns_ = std::max(widest_break_ns_, width);
      }
    }
    since_anchor_ns_[i] = Saturate(static_cast<__int128>(mono) - anchor_mono);
  }
  if (placed_in_breaks_ > 0) {
    char width[32];
    std::snprintf(width, sizeof width, "%.3f ms", static_cast<double>(widest_break_ns_) / 1e6);
    problem_ = std::to_string(placed_in_breaks_) +
               " records placed within an interval in which the cycle counter jumped or changed rate "
               "(widest " + width + "), in ring order";
  }
}

int64_t RingTimeline::WallNs(size_t i) const {
  const int64_t wall = Saturate(static_cast<__int128>(anchor_wall_ns_) + since_anchor_ns_[i]);
  return wall < 0 ? 0 : wall;
}

}  // namespace atraced::core
