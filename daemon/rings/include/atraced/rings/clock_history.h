// How the cycle counter kept time against CLOCK_MONOTONIC while this daemon ran: a bounded
// history of clock snapshots, in the manner of Perfetto's ClockSnapshot packets.
//
// The daemon adds one snapshot (CLOCK_REALTIME, CLOCK_MONOTONIC and the counter read
// together, base/cycle_counter.h: SampleClocks) on every tick and one at every ring save.
// Each new snapshot is checked against the counter's rate measured since the last break:
// an interval in which the counter stepped back, jumped, or changed its rate (a VM restored
// from a snapshot, a migration to a host of another frequency) is marked as a break, and the
// rate is measured anew after it. A record is then converted through the two snapshots
// around it (ring_timeline.h), never through a rate carried across a break.
//
// Tolerance: CLOCK_MONOTONIC itself is slewed by NTP by up to 500 ppm, so an interval
// agrees when its counter advanced within 1000 ppm + 100 µs of what the rate predicts. A
// smaller disagreement is not a break, and costs a record at most that much.
//
// Bounded: at kDefaultCapacity snapshots (about 4.5 hours of 2 s ticks, more with saves),
// every other snapshot of the older half is dropped, so the history thins out with age
// instead of forgetting; a break inside a dropped snapshot's intervals stays marked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "atraced/base/cycle_counter.h"

namespace atraced::core {

using atraced::ClockSample;

struct ClockSnapshot {
  ClockSample at;
  // The counter's rate, ticks per ns, measured from the last break to this snapshot; 0 when
  // no interval since the break was long enough to measure one.
  double ticks_per_ns = 0;
  // The interval that ends at this snapshot contained a break: a record stamped inside it
  // is placed within the interval, not by the rate.
  bool break_before = false;
};

// The verdict on the interval from `prev` to `next`, given the counter's rate measured
// before it (ticks per ns, 0 = unknown): empty when the counter kept time, else why not.
// Pure, for the tests.
std::string JudgeInterval(const ClockSample& prev, const ClockSample& next, double ticks_per_ns);

class ClockHistory {
 public:
  static constexpr size_t kDefaultCapacity = 8192;
  explicit ClockHistory(size_t capacity = kDefaultCapacity);

  // Adds a snapshot taken with the counter and judges the interval since the previous one.
  // Returns the verdict (empty when the counter kept time). Snapshots whose CLOCK_MONOTONIC
  // is not past the newest one's (two threads sampling at once) are judged but not kept.
  // Thread-safe: the loop's tick and the I/O workers' saves both add.
  std::string Add(const ClockSample& sample);

  // A copy of the snapshots that bear on records stamped since `monotonic_ns`: the newest
  // one at or before it, and every later one. Thread-safe.
  std::vector<ClockSnapshot> Since(int64_t monotonic_ns) const;

  size_t size() const;

 private:
  void Thin();  // under mu_

  mutable std::mutex mu_;
  const size_t capacity_;
  std::deque<ClockSnapshot> snaps_;
  ClockSample segment_start_;  // the first snapshot after the last break: rates count from it
};

}  // namespace atraced::core
