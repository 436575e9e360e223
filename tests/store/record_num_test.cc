// ASCEND_TRACE_RECORD_NUM keeps CANN's range, default and exact log lines.
#include <catch2/catch.hpp>

#include "atraced/store/record_num.h"
#include "support/capture_log.h"

using namespace atraced;
using atraced::testing::CaptureLog;

TEST_CASE("unset environment uses the default with CANN's info line", "[record_num]") {
  CaptureLog log;
  CHECK(RecordNumFromEnv(nullptr, std::nullopt, log.logger()) == 10);
  CHECK(log.HasExact(LogLevel::kInfo, "doesn't set env ASCEND_TRACE_RECORD_NUM, use default dir num=10."));
}

TEST_CASE("valid values are taken with CANN's info line", "[record_num]") {
  auto [text, value] = GENERATE(table<const char*, uint32_t>({{"10", 10}, {"15", 15}, {"999", 999}, {"1000", 1000}}));
  CaptureLog log;
  CHECK(RecordNumFromEnv(text, std::nullopt, log.logger()) == value);
  CHECK(log.HasExact(LogLevel::kInfo, "set dir num=" + std::to_string(value) + " by env ASCEND_TRACE_RECORD_NUM."));
}

TEST_CASE("invalid values warn and fall back to 10", "[record_num]") {
  auto text = GENERATE(as<std::string>{}, "", "abc", "9", "1001", "0", "-15", "15.5", "15 ", " 15", "15x", "+15",
                       "0x10", "99999999999999999999999", "1e2");
  CAPTURE(text);
  CaptureLog log;
  CHECK(RecordNumFromEnv(text.c_str(), std::nullopt, log.logger()) == 10);
  CHECK(log.HasExact(LogLevel::kWarning, "invalid value [" + text +
                                             "] for ASCEND_TRACE_RECORD_NUM, expected range: [10, 1000]. Use default dir num=10."));
}

TEST_CASE("the environment overrides the configuration file, which is the fallback", "[record_num]") {
  CaptureLog log;
  CHECK(RecordNumFromEnv("20", 50u, log.logger()) == 20);
  CHECK(RecordNumFromEnv(nullptr, 50u, log.logger()) == 50);
  CHECK(RecordNumFromEnv("bad", 50u, log.logger()) == 50);
  CHECK(log.Has(LogLevel::kWarning, "Use default dir num=50."));
}

TEST_CASE("strict parse for flags and configuration", "[record_num]") {
  CHECK(ParseRecordNum("10") == 10u);
  CHECK(ParseRecordNum("1000") == 1000u);
  CHECK_FALSE(ParseRecordNum("9"));
  CHECK_FALSE(ParseRecordNum("1001"));
  CHECK_FALSE(ParseRecordNum("4294967306"));  // wraps to 10 in 32 bits
  CHECK_FALSE(ParseRecordNum(""));
}
