// CANN's 20-digit local time: YYYYMMDDhhmmss + milliseconds + microseconds.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>

#include "atraced/store/trace_time.h"

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
  CHECK(IsValidTraceTime("20240229235960999999"));  // a leap day, a leap second
  CHECK(IsValidTraceTime("20000229000000000000"));  // 2000 is a leap year
  CHECK(IsValidTraceTime("00010101000000000000"));
  std::string why;
  auto bad = GENERATE(as<std::string>{}, "", "2026052214301512345", "202605221430151234567", "2026052214301512345x",
                      "20261322143015123456", "20260500143015123456", "20260522243015123456", "20260522146015123456",
                      "20260522143061123456", "-0260522143015123456",
                      // calendar dates: no Feb 31, no Feb 29 outside leap years, no year 0000
                      "20240231000000000000", "20230229000000000000", "21000229000000000000", "20260431000000000000",
                      "00000101000000000000");
  CAPTURE(bad);
  CHECK_FALSE(IsValidTraceTime(bad, &why));
  CHECK_FALSE(why.empty());
}
