#include "atraced/rings/clock_history.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace atraced::core {

namespace {

// CLOCK_MONOTONIC is slewed by NTP by up to 500 ppm against the counter; twice that, plus
// what two clock samples' brackets can be off by on a busy machine, is "kept time".
constexpr double kRateTolerance = 1e-3;
constexpr double kFixedToleranceNs = 100e3;
// The shortest span a rate is measured over: shorter, and sampling jitter dominates it.
constexpr int64_t kMinRateSpanNs = 10'000'000;

std::string Ms(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  return buf;
}

}  // namespace

std::string JudgeInterval(const ClockSample& prev, const ClockSample& next, double ticks_per_ns) {
  const int64_t dm = next.monotonic_ns - prev.monotonic_ns;
  if (dm <= 0) return {};
  const auto dc = static_cast<int64_t>(next.counter - prev.counter);
  if (dc <= 0) {
    return "the cycle counter went back " + std::to_string(-dc) + " ticks while CLOCK_MONOTONIC advanced " + Ms(dm);
  }
  if (ticks_per_ns <= 0) return {};
  const double off_ns = (static_cast<double>(dc) - ticks_per_ns * static_cast<double>(dm)) / ticks_per_ns;
  if (std::fabs(off_ns) <= kFixedToleranceNs + kRateTolerance * static_cast<double>(dm)) return {};
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.6f", ticks_per_ns);
  return "the cycle counter ran " + Ms(std::fabs(off_ns)) + (off_ns > 0 ? " ahead of" : " behind") +
         " its rate of " + rate + " GHz over " + Ms(dm) + " of CLOCK_MONOTONIC";
}

ClockHistory::ClockHistory(size_t capacity) : capacity_(std::max<size_t>(capacity, 4)) {}

std::string ClockHistory::Add(const ClockSample& sample) {
  std::lock_guard lock(mu_);
  if (snaps_.empty()) {
    snaps_.push_back({sample, 0, false});
    segment_start_ = sample;
    return {};
  }
  const ClockSnapshot& last = snaps_.back();
  std::string verdict = JudgeInterval(last.at, sample, last.ticks_per_ns);
  if (sample.monotonic_ns <= last.at.monotonic_ns) return verdict;
  ClockSnapshot s{sample, 0, !verdict.empty()};
  if (s.break_before) {
    segment_start_ = sample;
  } else {
    const int64_t span = sample.monotonic_ns - segment_start_.monotonic_ns;
    if (span >= kMinRateSpanNs) {
      s.ticks_per_ns = static_cast<double>(sample.counter - segment_start_.counter) / static_cast<double>(span);
    }
    // Else too soon after the break to measure: no rate yet, so the next interval is not
    // judged; the first snapshot kMinRateSpanNs after the break measures it.
  }
  snaps_.push_back(s);
  if (snaps_.size() > capacity_) Thin();
  return verdict;
}

void ClockHistory::Thin() {
  // Drop every other snapshot of the older half. The interval a dropped snapshot ended is
  // merged into the next one's, and so is its break.
  const size_t half = snaps_.size() / 2;
  std::deque<ClockSnapshot> kept;
  bool carry_break = false;
  for (size_t i = 0; i < snaps_.size(); ++i) {
    ClockSnapshot s = snaps_[i];
    s.break_before = s.break_before || carry_break;
    carry_break = false;
    if (i < half && i % 2 == 1) {
      carry_break = s.break_before;
      continue;
    }
    kept.push_back(s);
  }
  snaps_.swap(kept);
}

std::vector<ClockSnapshot> ClockHistory::Since(int64_t monotonic_ns) const {
  std::lock_guard lock(mu_);
  auto it = std::upper_bound(snaps_.begin(), snaps_.end(), monotonic_ns,
                             [](int64_t m, const ClockSnapshot& s) { return m < s.at.monotonic_ns; });
  if (it != snaps_.begin()) --it;
  return {it, snaps_.end()};
}

size_t ClockHistory::size() const {
  std::lock_guard lock(mu_);
  return snaps_.size();
}

}  // namespace atraced::core
