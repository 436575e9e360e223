// The token bucket behind the per-client rate limits: pure, the time is passed in.
#include <catch2/catch.hpp>

#include "atraced/admission/rate_limit.h"

using namespace atraced;
using namespace std::chrono_literals;

namespace {
const TokenBucket::TimePoint kT0{std::chrono::seconds(1'780'000'000)};

size_t TakeAll(TokenBucket& b, const RateLimit& l, TokenBucket::TimePoint at) {
  size_t n = 0;
  while (n < 1'000'000 && b.Take(l, at)) ++n;
  return n;
}
}  // namespace

TEST_CASE("a new bucket allows a burst, then refills at burst per interval", "[rate]") {
  RateLimit l{10s, 5};
  TokenBucket b;
  CHECK(b.Full(l, kT0));
  CHECK(TakeAll(b, l, kT0) == 5);
  CHECK_FALSE(b.Full(l, kT0));
  CHECK(TakeAll(b, l, kT0 + 1s) == 0);   // half a token
  CHECK(TakeAll(b, l, kT0 + 2s) == 1);   // one token per 2 s
  CHECK(TakeAll(b, l, kT0 + 100s) == 5); // never more than the burst
  CHECK(b.Full(l, kT0 + 200s));
}

TEST_CASE("a clock stepping back refills nothing and is not held against the client", "[rate]") {
  RateLimit l{10s, 2};
  TokenBucket b;
  CHECK(TakeAll(b, l, kT0) == 2);
  CHECK(TakeAll(b, l, kT0 - 1h) == 0);
  CHECK(TakeAll(b, l, kT0 + 5s) == 1);
}

TEST_CASE("an interval or a burst of 0 turns the limit off", "[rate]") {
  for (RateLimit l : {RateLimit{0s, 5}, RateLimit{10s, 0}}) {
    TokenBucket b;
    CHECK_FALSE(l.enabled());
    CHECK(TakeAll(b, l, kT0) == 1'000'000);
  }
}
