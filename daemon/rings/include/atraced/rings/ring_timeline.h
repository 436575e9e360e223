// When each record of a ring happened: the ring's stamps turned into wall-clock time.
//
// A ring stamps its records with CLOCK_MONOTONIC or, when its header has
// ATR_RING_FLAG_COUNTER, with the machine's cycle counter (docs/TIMESTAMPS.md). A pure
// function of the ring, the daemon's clock snapshots and the clocks sampled at the save, so
// a test can drive it with any clocks: a restart, a ring hours old, an NTP step, a counter
// that jumps.
//
//   monotonic ring: wall = realtime anchor + (stamp - monotonic anchor), as in protocol 1.1.
//   counter ring:   the ring's own (monotonic, counter) anchor, the daemon's snapshots since
//                   (clock_history.h) and the save's sample are points of one piecewise-linear
//                   map from counter to CLOCK_MONOTONIC. A record is placed by the two points
//                   around it, walked in ring order, so a counter that stepped back cannot
//                   send a record into the wrong interval. A record inside an interval where
//                   the counter broke (jumped, stepped back, changed rate) is placed within
//                   that interval, in ring order, and problem() says how many were and how
//                   wide the interval was. CLOCK_MONOTONIC becomes wall time at the save's
//                   offset, so a step of CLOCK_REALTIME after the ring was made moves none of
//                   its records off the wall clock as it reads at the save.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "atraced/base/cycle_counter.h"
#include "atraced/proto/ring_reader.h"
#include "atraced/rings/clock_history.h"

namespace atraced::core {

using atraced::ClockSample;

class RingTimeline {
 public:
  // Places every record of `snap`. `now` must be sampled after the snapshot was copied
  // (every stamp is then in the past); `history` is the daemon's snapshots since the ring's
  // anchor (ClockHistory::Since), empty where there are none.
  static RingTimeline Of(const proto::RingSnapshot& snap, std::span<const ClockSnapshot> history,
                         const ClockSample& now);
  static RingTimeline Of(const proto::RingSnapshot& snap, const ClockSample& now) { return Of(snap, {}, now); }

  // The wall time of the ring's anchor, ns since the epoch (CANN's .bin header time).
  int64_t anchor_wall_ns() const { return anchor_wall_ns_; }
  // Record `i` of the snapshot (snap.records[i]): ns from the anchor (CANN's .bin "cycle" at
  // 1 GHz; negative for a stamp before the anchor, which only a hostile ring writes), and its
  // wall time, ns since the epoch, never negative.
  int64_t SinceAnchorNs(size_t i) const { return since_anchor_ns_[i]; }
  int64_t WallNs(size_t i) const;
  // The records' indices into snap.records in the order they happened as placed: by wall
  // time, then by ring order. The files are written in this order.
  const std::vector<size_t>& order() const { return order_; }
  // Records placed within an interval in which the counter broke, and the widest such interval.
  size_t placed_in_breaks() const { return placed_in_breaks_; }
  int64_t widest_break_ns() const { return widest_break_ns_; }
  // Non-empty when records could not all be placed by the counter: the anchor is not before
  // the daemon's sample (every record is then placed at the anchor), or some fell in a break.
  const std::string& problem() const { return problem_; }

 private:
  void PlaceCounterRecords(const proto::RingSnapshot& snap, std::span<const ClockSnapshot> history,
                           const ClockSample& now);

  int64_t anchor_wall_ns_ = 0;
  std::vector<int64_t> since_anchor_ns_;
  std::vector<size_t> order_;
  size_t placed_in_breaks_ = 0;
  int64_t widest_break_ns_ = 0;
  std::string problem_;
};

}  // namespace atraced::core
