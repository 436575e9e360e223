// Per-client rate limits on event creation (journald's RateLimitIntervalSec= and
// RateLimitBurst=, as a token bucket): a client may create `burst` event directories at once
// and `burst` more per `interval`, refilled continuously rather than in windows, so a client
// cannot double its rate by timing bursts at a window's edge. Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstdint>

namespace atraced {

struct RateLimit {
  std::chrono::milliseconds interval{std::chrono::seconds(30)};
  uint32_t burst = 10000;
  // journald's rule: an interval or a burst of 0 turns the limit off.
  bool enabled() const { return interval.count() > 0 && burst > 0; }
  bool operator==(const RateLimit&) const = default;
};

class TokenBucket {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  // Takes one token if there is one. A new bucket is full. A clock that steps back refills
  // nothing (and is not held against the client).
  bool Take(const RateLimit& limit, TimePoint now);
  // True if the bucket is full at `now`: it then behaves exactly like a new one.
  bool Full(const RateLimit& limit, TimePoint now) const;

 private:
  double Level(const RateLimit& limit, TimePoint now) const;

  bool started_ = false;
  double tokens_ = 0;
  TimePoint at_{};
};

}  // namespace atraced
