// The on-disk schema: every name form formats and parses back, and malformed names are
// refused (a refused name is never counted or deleted by the store).
#include <catch2/catch.hpp>

#include "atraced/store/names.h"
#include "atraced/store/trace_time.h"

using namespace atraced;

static const std::string kT = "20260522143015123456";

TEST_CASE("process dir names format and parse back", "[names]") {
  ProcessDirName n{4242, 4343, kT};
  CHECK(FormatProcessDirName(n) == "trace_4242_4343_" + kT);
  auto p = ParseProcessDirName("trace_4242_4343_" + kT);
  REQUIRE(p);
  CHECK(*p == n);
}

TEST_CASE("malformed process dir names are refused", "[names]") {
  auto bad = GENERATE(as<std::string>{}, "", "trace_", "trace_1_2", "trace_1_2_", "trace_01_2_20260522143015123456",
                      "trace_1_2_2026052214301512345", "trace_1_2_202605221430151234567", "trace_-1_2_20260522143015123456",
                      "trace_0_2_20260522143015123456", "Trace_1_2_20260522143015123456", "trace_1_2_20261322143015123456",
                      "trace_1_2_20260522143015123456x", "trace_1_99999999999_20260522143015123456",
                      "trace_1_2_2026052214301512345a", ".trace_1_2_20260522143015123456");
  CAPTURE(bad);
  CHECK_FALSE(ParseProcessDirName(bad));
}

TEST_CASE("event dir names cover the three events", "[names]") {
  auto [kind, text] = GENERATE(table<EventKind, std::string>({{EventKind::kSchedule, "schedule"},
                                                              {EventKind::kStackcore, "stackcore"},
                                                              {EventKind::kExit, "exit"}}));
  EventDirName n{kind, 77, kT};
  std::string formatted = FormatEventDirName(n);
  CHECK(formatted == text + "_event_77_" + kT);
  auto p = ParseEventDirName(formatted);
  REQUIRE(p);
  CHECK(*p == n);
}

TEST_CASE("malformed event dir names are refused", "[names]") {
  auto bad = GENERATE(as<std::string>{}, "progress_event_1_20260522143015123456", "schedule_event__20260522143015123456",
                      "schedule_event_1_20260522143015123456/", "schedule_evt_1_20260522143015123456",
                      "schedule_event_0_20260522143015123456", "schedule_event_1_2026052214301512345",
                      "SCHEDULE_event_1_20260522143015123456", "schedule_event_1_20260522143015123456.tmp",
                      ".atraced_staging_5");
  CAPTURE(bad);
  CHECK_FALSE(ParseEventDirName(bad));
}

TEST_CASE("object, ts and stackcore file names", "[names]") {
  CHECK(FormatObjectFileName({"schedule", "RUNTIME_ATRACE_DEV0_TS0", false}) == "schedule_tracer_RUNTIME_ATRACE_DEV0_TS0.txt");
  CHECK(FormatObjectFileName({"schedule", "aicpu", true}) == "schedule_tracer_aicpu.bin");
  CHECK(FormatTsFileName(3) == "schedule_tracer_ts_3.txt");
  auto ts = ParseObjectFileName("schedule_tracer_ts_3.txt");
  REQUIRE(ts);
  CHECK(ts->object == "ts_3");
  CHECK_FALSE(ts->binary);
  auto bin = ParseObjectFileName("schedule_tracer_a.b-c.bin");
  REQUIRE(bin);
  CHECK(bin->object == "a.b-c");
  CHECK(bin->binary);

  StackcoreFileName sc{11, 1234, "my_prog", kT};
  CHECK(FormatStackcoreFileName(sc) == "stackcore_tracer_11_1234_my_prog_" + kT + ".txt");
  auto p = ParseStackcoreFileName(FormatStackcoreFileName(sc));
  REQUIRE(p);
  CHECK(*p == sc);
  CHECK(IsTraceFileName("stackcore_tracer_11_1234_my_prog_" + kT + ".txt"));
  // CANN's on-demand stack dump, the file asys waits for.
  StackcoreFileName dump{35, 1234, "my_prog", kT, /*binary=*/true};
  CHECK(FormatStackcoreFileName(dump) == "stackcore_tracer_35_1234_my_prog_" + kT + ".bin");
  auto d = ParseStackcoreFileName(FormatStackcoreFileName(dump));
  REQUIRE(d);
  CHECK(*d == dump);
}

TEST_CASE("malformed file names are refused", "[names]") {
  auto bad = GENERATE(as<std::string>{}, "", "schedule_tracer_.txt", "schedule_tracer_x.log", "schedule_tracer_x",
                      "schedule_tracer_a/b.txt", "schedule_tracer_..txt", "schedule_tracer_...txt",
                      "tracer_x.txt", "schedule_tracer_" + std::string(32, 'a') + ".txt",
                      "schedule_tracer_sp ace.txt", ".atraced_1_host_0_0_0",
                      "stackcore_tracer_11_1234__" + std::string("20260522143015123456") + ".txt",
                      "stackcore_tracer_0_1234_p_20260522143015123456.txt",
                      "stackcore_tracer_11_1234_p_2026052214301512345.txt",
                      "stackcore_tracer_35_1234_p_20260522143015123456.log");
  CAPTURE(bad);
  CHECK_FALSE(IsTraceFileName(bad));
}

TEST_CASE("object names allow [A-Za-z0-9_.-] only", "[names]") {
  std::string why;
  CHECK(IsSafeName("Abc_09.x-y"));
  CHECK_FALSE(IsSafeName("", &why));
  CHECK(why == "empty");
  CHECK_FALSE(IsSafeName(".", &why));
  CHECK_FALSE(IsSafeName("..", &why));
  CHECK(why.find("..") != std::string::npos);
  CHECK_FALSE(IsSafeName("a/b", &why));
  CHECK(why == "character 0x2f '/' not allowed");
  CHECK_FALSE(IsSafeName(std::string("a\0b", 3), &why));
  CHECK(why == "character 0x00 not allowed");
  CHECK_FALSE(IsSafeName("caf\xc3\xa9"));
}

TEST_CASE("marker and staging names", "[names]") {
  EventMarker m{42, Side::kDevice, 7, 1000, 1780000000123456};
  std::string name = FormatMarkerName(m);
  CHECK(name == ".atraced_42_device_7_1000_1780000000123456");
  auto p = ParseMarkerName(name);
  REQUIRE(p);
  CHECK(*p == m);
  CHECK_FALSE(ParseMarkerName(".atraced_0_host_0_0_0"));
  CHECK_FALSE(ParseMarkerName(".atraced_1_guest_0_0_0"));
  CHECK_FALSE(ParseMarkerName(".atraced_1_host_0_0"));
  CHECK(FormatStagingName(9) == ".atraced_staging_9");
  CHECK(ParseStagingName(".atraced_staging_9") == 9u);
  CHECK_FALSE(ParseStagingName(".atraced_staging_"));
  CHECK_FALSE(ParseStagingName(".atraced_staging_9x"));
}
