#include "atraced/rings/ring_timeline.h"

#include <limits>

#include "atraced/base/cycle_counter.h"

namespace atraced::core {

namespace {

int64_t Saturate(__int128 v) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  return v > kMax ? kMax : v < kMin ? kMin : static_cast<int64_t>(v);
}

}  // namespace

RingTimeline RingTimeline::Of(const proto::RingSnapshot& snap, const ClockSample& now) {
  RingTimeline t;
  if (!(snap.flags & ATR_RING_FLAG_COUNTER)) {
    t.stamp_anchor_ = snap.monotonic_ns;
    t.anchor_wall_ns_ = static_cast<int64_t>(snap.realtime_ns);
    return t;
  }
  t.counter_ = true;
  t.stamp_anchor_ = snap.counter_anchor;
  // Unsigned differences, read as signed: a hostile anchor ahead of now is negative here.
  const auto elapsed_ns = static_cast<int64_t>(static_cast<uint64_t>(now.monotonic_ns) - snap.monotonic_ns);
  const auto elapsed_ticks = static_cast<int64_t>(now.counter - snap.counter_anchor);
  if (elapsed_ns <= 0 || elapsed_ticks <= 0) {
    t.anchor_wall_ns_ = static_cast<int64_t>(snap.realtime_ns);
    t.rate_ns_ = 0;
    t.problem_ = "ring header: counter anchor " + std::to_string(snap.counter_anchor) + " at monotonic " +
                 std::to_string(snap.monotonic_ns) + " is not before the daemon's " + std::to_string(now.counter) +
                 " at " + std::to_string(now.monotonic_ns) + ": records placed at the ring's creation";
    return t;
  }
  t.rate_ns_ = elapsed_ns;
  t.rate_ticks_ = elapsed_ticks;
  t.anchor_wall_ns_ = now.realtime_ns - elapsed_ns;
  return t;
}

int64_t RingTimeline::SinceAnchorNs(uint64_t stamp) const {
  const auto delta = static_cast<int64_t>(stamp - stamp_anchor_);
  if (!counter_) return delta;
  return Saturate(static_cast<__int128>(delta) * rate_ns_ / rate_ticks_);
}

int64_t RingTimeline::WallNs(uint64_t stamp) const {
  const int64_t wall = Saturate(static_cast<__int128>(anchor_wall_ns_) + SinceAnchorNs(stamp));
  return wall < 0 ? 0 : wall;
}

}  // namespace atraced::core
