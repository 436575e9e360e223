// What a report is, read from its first lines (files/dir_origin.h), and how the timeline marks
// it (timeline/trace_events.h): the daemon's dumps of a live process are stack dumps, an
// operator's and the hang watch's told apart, never plain reports.
#include <catch2/catch.hpp>

#include <string>

#include "files/dir_origin.h"
#include "timeline/trace_events.h"

using namespace atracectl;

TEST_CASE("report mark: a process dumped from outside is a stack dump, the hang watch's a hang dump, a "
          "process's own report a report",
          "[atracectl][timeline]") {
  const std::string by_operator =
      "atraced: process 6294 (train) dumped from outside; it runs on\n"
      "dumped by: uid 0 (pid 7346), no signal sent\n"
      "stacks: 6 of 6 threads read, one at a time, 6 written below\n\n[stack]\n";
  const std::string by_watch =
      "atraced: process 6294 (train) dumped from outside; it runs on\n"
      "dumped by: atraced's hang watch, no signal sent\n"
      "hang: pid 6294 stalled: no record for 10 s (hang timeout 10 s) while alive, blocked\n\n[stack]\n";
  CHECK(ReportOrigin(by_operator).origin == Origin::kDump);
  CHECK(ReportOrigin(by_watch).origin == Origin::kHang);
  CHECK(ReportMark(by_operator) == std::pair<Mark, std::string_view>{Mark::kDump, "stack dump"});
  CHECK(ReportMark(by_watch) == std::pair<Mark, std::string_view>{Mark::kDump, "hang dump"});
  // The watch's words only count on the line that says who dumped it.
  const std::string elsewhere =
      "atraced: process 6294 (train) dumped from outside; it runs on\n"
      "dumped by: uid 1000 (pid 1), no signal sent\n"
      "note: atraced's hang watch\n";
  CHECK(ReportOrigin(elsewhere).origin == Origin::kDump);
  CHECK(ReportMark("some text a process wrote\n").first == Mark::kRecord);
}
