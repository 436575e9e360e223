#include "atraced/admission/rate_limit.h"

#include <algorithm>

namespace atraced {

double TokenBucket::Level(const RateLimit& limit, TimePoint now) const {
  const double burst = limit.burst;
  if (!started_) return burst;
  const auto elapsed = std::chrono::duration<double, std::milli>(now - at_).count();
  if (elapsed <= 0) return std::min(tokens_, burst);
  return std::min(burst, tokens_ + elapsed * burst / static_cast<double>(limit.interval.count()));
}

bool TokenBucket::Take(const RateLimit& limit, TimePoint now) {
  if (!limit.enabled()) return true;
  tokens_ = Level(limit, now);
  if (!started_ || now > at_) at_ = now;
  started_ = true;
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

bool TokenBucket::Full(const RateLimit& limit, TimePoint now) const {
  return !limit.enabled() || Level(limit, now) >= static_cast<double>(limit.burst);
}

}  // namespace atraced
