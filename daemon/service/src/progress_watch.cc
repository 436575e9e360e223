#include "atraced/service/progress_watch.h"

namespace atraced {

std::vector<ProgressWatch::Stall> ProgressWatch::Observe(TimePoint now, std::span<const Sample> samples) {
  std::vector<Stall> stalls;
  const bool stepped_back = now < last_now_;
  last_now_ = now;
  ++generation_;
  for (const Sample& s : samples) {
    auto [it, added] = states_.try_emplace(s.key);
    State& st = it->second;
    st.generation = generation_;
    if (added || st.written != s.written || stepped_back) {
      // Moved (or first seen, or the clock went back): the wait starts again.
      if (added || st.written != s.written) st.reported = st.stalled = st.busy = false;
      st.written = s.written;
      st.moved = now;
      st.still_seen = false;
      st.cpu_at_still.reset();
      continue;
    }
    // Never wrote a record, already reported, or not watched: not judged.
    if (s.written == 0 || st.reported || s.timeout.count() <= 0) continue;
    const auto still = std::chrono::duration_cast<std::chrono::milliseconds>(now - st.moved);
    if (!st.still_seen) {
      // Still for half its timeout: the CPU baseline of a possible stall. Not sooner: a
      // process idle between two records for a tick or two costs no /proc read.
      if (still < s.timeout / 2) continue;
      st.still_seen = true;
      st.still_since = now;
      st.cpu_at_still = cpu_(s.key);
      continue;  // the verdict waits a tick at least, so that busy or blocked is measured
    }
    if (still < s.timeout) continue;
    st.reported = true;
    Stall stall{s.key, still, false, std::nullopt};
    if (const auto cpu = cpu_(s.key); cpu && st.cpu_at_still && *cpu >= *st.cpu_at_still) {
      stall.cpu_used = *cpu - *st.cpu_at_still;
      const auto window = std::chrono::duration_cast<std::chrono::milliseconds>(now - st.still_since);
      stall.busy = window.count() > 0 && static_cast<double>(stall.cpu_used->count()) >=
                                             kBusyShare * static_cast<double>(window.count());
    }
    st.stalled = true;
    st.busy = stall.busy;
    stalls.push_back(stall);
  }
  // Whoever was not sampled left: O(watched), as the samples are.
  for (auto it = states_.begin(); it != states_.end();) {
    it = it->second.generation == generation_ ? std::next(it) : states_.erase(it);
  }
  return stalls;
}

void ProgressWatch::Captured(const Key& key) {
  if (auto it = states_.find(key); it != states_.end()) it->second.reported = true;
}

bool ProgressWatch::Stalled(const Key& key) const {
  auto it = states_.find(key);
  return it != states_.end() && it->second.reported;
}

ProgressWatch::View ProgressWatch::Look(const Key& key, TimePoint now) const {
  View v;
  auto it = states_.find(key);
  if (it == states_.end()) return v;
  const State& st = it->second;
  v.known = true;
  v.never_wrote = st.written == 0;
  v.moved = st.moved;
  v.still = StillFor(key, now);
  v.stalled = st.reported && st.stalled;
  v.busy = v.stalled && st.busy;
  v.captured = st.reported && !st.stalled;
  return v;
}

std::chrono::milliseconds ProgressWatch::StillFor(const Key& key, TimePoint now) const {
  auto it = states_.find(key);
  if (it == states_.end() || it->second.written == 0 || now < it->second.moved) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.moved);
}

}  // namespace atraced
