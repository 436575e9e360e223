// When each record of a ring happened: the ring's stamps turned into wall-clock time.
//
// A ring stamps its records with CLOCK_MONOTONIC or, when its header has
// ATR_RING_FLAG_COUNTER, with the machine's cycle counter (docs/TIMESTAMPS.md). A pure
// function of the ring's anchors and of the clocks the daemon sampled at save, so a test
// can drive it with any clocks: a restart, a ring hours old, an NTP step.
//
//   monotonic ring: wall = realtime anchor + (stamp - monotonic anchor), as in protocol 1.1.
//   counter ring:   the tick rate is measured over the ring's own life, from its
//                   (monotonic, counter) anchor to the daemon's sample; a record's age is
//                   (counter now - stamp) at that rate and its wall time is "now" minus its
//                   age. So the daemon needs no calibration of its own (a restart loses
//                   nothing), the error of a rate measured over the ring's life stays below
//                   the clocks' sampling jitter for every record in it, and a step of
//                   CLOCK_REALTIME after the ring was made moves none of its records off
//                   the wall clock as it reads at the save.
#pragma once

#include <cstdint>
#include <string>

#include "atraced/base/cycle_counter.h"
#include "atraced/proto/ring_reader.h"

namespace atraced::core {

using atraced::ClockSample;

class RingTimeline {
 public:
  // `now` must be sampled after the snapshot was copied (every stamp is then in the past).
  static RingTimeline Of(const proto::RingSnapshot& snap, const ClockSample& now);

  // The wall time of the ring's anchor, ns since the epoch (CANN's .bin header time).
  int64_t anchor_wall_ns() const { return anchor_wall_ns_; }
  // ns from the anchor to `stamp` (CANN's .bin "cycle" at 1 GHz); negative for a stamp
  // before the anchor, which only a hostile ring writes.
  int64_t SinceAnchorNs(uint64_t stamp) const;
  // The record's wall time, ns since the epoch, never negative.
  int64_t WallNs(uint64_t stamp) const;
  // Non-empty when the counter's rate could not be measured (the daemon's counter is not
  // past the ring's anchor): every record is then placed at the anchor, and this says why.
  const std::string& problem() const { return problem_; }

 private:
  bool counter_ = false;
  uint64_t stamp_anchor_ = 0;  // the monotonic or counter anchor
  int64_t anchor_wall_ns_ = 0;
  int64_t rate_ns_ = 0;     // counter rings: ns over
  int64_t rate_ticks_ = 1;  //   ticks, both measured over the ring's life
  std::string problem_;
};

}  // namespace atraced::core
