#include <catch2/catch.hpp>

#include <chrono>

#include "atraced/common/refusal_log.h"

using namespace atraced;

TEST_CASE("a summary asks whether its uid's line is due without counting a refusal", "[refusals]") {
  RefusalLog log;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  uint64_t suppressed = 99;
  CHECK(log.Due(5, t0));  // never logged
  CHECK(log.ShouldLog(5, t0, &suppressed));
  CHECK_FALSE(log.Due(5, t0 + std::chrono::seconds(1)));
  CHECK_FALSE(log.Due(5, t0 + std::chrono::seconds(2)));
  CHECK(log.Due(6, t0 + std::chrono::seconds(2)));  // another uid has its own interval
  CHECK(log.Due(5, t0 + RefusalLog::kInterval));
  CHECK(log.ShouldLog(5, t0 + RefusalLog::kInterval, &suppressed));
  CHECK(suppressed == 0);  // asking was not a refusal
}

TEST_CASE("refusals are logged once per interval per uid, with the count of those not logged", "[fds][refusals]") {
  RefusalLog log;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  uint64_t suppressed = 99;
  CHECK(log.ShouldLog(1000, t0, &suppressed));
  CHECK(suppressed == 0);
  for (int i = 0; i < 40000; ++i) CHECK_FALSE(log.ShouldLog(1000, t0 + std::chrono::milliseconds(i / 8), &suppressed));
  CHECK(log.ShouldLog(2000, t0 + std::chrono::seconds(1), &suppressed));  // another uid is not held back
  CHECK(log.ShouldLog(1000, t0 + RefusalLog::kInterval, &suppressed));
  CHECK(suppressed == 40000);
  CHECK_FALSE(log.ShouldLog(1000, t0 + RefusalLog::kInterval + std::chrono::seconds(1), &suppressed));
}
