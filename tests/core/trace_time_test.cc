// CANN's 20-digit local time: YYYYMMDDhhmmss + milliseconds + microseconds.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>

#include "atraced/core/trace_time.h"

using namespace atraced;
using namespace std::chrono;

namespace {
struct ScopedTz {
  explicit ScopedTz(const char* tz) {
    if (const char* old = std::getenv("TZ")) saved = old, had = true;
    ::setenv("TZ", tz, 1);
    ::tzset();
  }
  ~ScopedTz() {
    if (had) ::setenv("TZ", saved.c_str(), 1); else ::unsetenv("TZ");
    ::tzset();
  }
  std::string saved;
  bool had = false;
};
}  // namespace

TEST_CASE("trace time is local time with milli- and microseconds", "[time]") {
  // 2026-05-22 14:30:15.123456 UTC
  auto t = system_clock::time_point(seconds(1779460215) + microseconds(123456));
  {
    ScopedTz tz("UTC");
    CHECK(FormatTraceTime(t) == "20260522143015123456");
  }
  {
    ScopedTz tz("CST-8");  // China Standard Time: UTC+8, what Ascend hosts usually run
    CHECK(FormatTraceTime(t) == "20260522223015123456");
  }
}

TEST_CASE("trace time pads small fractions", "[time]") {
  ScopedTz tz("UTC");
  auto t = system_clock::time_point(seconds(1779460215) + microseconds(7));
  CHECK(FormatTraceTime(t) == "20260522143015000007");
}

TEST_CASE("trace time validation", "[time]") {
  CHECK(IsValidTraceTime("20260522143015123456"));
  std::string why;
  auto bad = GENERATE(as<std::string>{}, "", "2026052214301512345", "202605221430151234567", "2026052214301512345x",
                      "20261322143015123456", "20260500143015123456", "20260522243015123456", "20260522146015123456",
                      "20260522143061123456", "-0260522143015123456");
  CAPTURE(bad);
  CHECK_FALSE(IsValidTraceTime(bad, &why));
  CHECK_FALSE(why.empty());
}
