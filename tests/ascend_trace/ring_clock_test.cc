// Which clock a ring stamps with, and that a save places its records on the wall clock
// either way (docs/TIMESTAMPS.md): a real process (clock_child.c) against the real daemon.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "atraced/base/cycle_counter.h"
#include "atraced/proto/ring_layout.h"
#include "support/daemon_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using atraced::testing::DaemonProcess;
using atraced::testing::ListNames;
using atraced::testing::ReadFile;
using atraced::testing::Run;
using atraced::testing::RunResult;

namespace {

// Runs clock_child with `records` records against `d`, in UTC, with `env` added, and
// nothing else in its environment.
RunResult RunChild(const DaemonProcess& d, int records, std::map<std::string, std::string> env) {
  env.insert({{"ATRACED_SOCKET", d.socket()}, {"TZ", "UTC"}});
  return Run({ASCEND_TRACE_CLOCK_CHILD, std::to_string(records)}, {.env = env, .inherit_env = false});
}

// The exit save of clock_obj.
std::string ExitSave(const DaemonProcess& d) {
  for (const auto& proc : ListNames(d.trace_dir())) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : ListNames(d.trace_dir() + "/" + proc)) {
      if (ev.rfind("exit_event_", 0) == 0) {
        return ReadFile(d.trace_dir() + "/" + proc + "/" + ev + "/schedule_tracer_clock_obj.txt");
      }
    }
  }
  return "";
}

// "YYYY-MM-DD hh:mm:ss.mmm.uuu wall=N" (UTC): the line's time and N, in ns.
bool ParseLine(const std::string& line, int64_t* line_ns, int64_t* wall_ns) {
  std::tm tm{};
  int ms = 0, us = 0;
  long long wall = 0;
  if (std::sscanf(line.c_str(), "%d-%d-%d %d:%d:%d.%d.%d wall=%lld", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &us, &wall) != 9) {
    return false;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  *line_ns = static_cast<int64_t>(::timegm(&tm)) * 1000000000 + ms * 1000000ll + us * 1000ll;
  *wall_ns = wall;
  return true;
}

// Every record of the save is placed within 2 ms of when it was submitted: after its
// submitter read CLOCK_REALTIME (the `wall=` in its text) and before the next record's read,
// which came after this record's submit returned. Bounding by the next read, not by a fixed
// span, keeps the check true however long a busy machine preempts the submitter. The newest
// record is 300 ms old at the save, so reading counter ticks as ns, or any rate off by more
// than a few hundred ppm, misplaces records by far more than the bound.
void CheckPlacement(const std::string& text, size_t records) {
  constexpr int64_t kWithinNs = 2'000'000;
  std::vector<std::pair<int64_t, int64_t>> placed;  // (line time, wall read before the submit)
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("atraced: ring ", 0) == 0 && pos >= text.size()) break;  // where each sits in the ring
    INFO(line);
    int64_t line_ns = 0, wall_ns = 0;
    REQUIRE(ParseLine(line, &line_ns, &wall_ns));
    placed.emplace_back(line_ns, wall_ns);
  }
  REQUIRE(placed.size() == records);
  for (size_t k = 0; k < placed.size(); ++k) {
    INFO("record " << k << " placed at " << placed[k].first << ", submitted after " << placed[k].second);
    CHECK(placed[k].first >= placed[k].second - kWithinNs);
    if (k + 1 < placed.size()) {
      CHECK(placed[k + 1].second > placed[k].second);  // in the order they were submitted
      CHECK(placed[k].first <= placed[k + 1].second + kWithinNs);
    }
  }
}

// Where the daemon would grant the counter: it reads the same CPU's flags and instruction,
// and the CPUs of one machine agree (counter_trust.h).
bool CounterHere() { return atraced::CounterInstructionRuns(nullptr) && atraced::CpuSaysCounterInvariant(); }

}  // namespace

TEST_CASE("ring clock: records stamped with the cycle counter land on the wall clock within 2 ms") {
  DaemonProcess d;
  REQUIRE(d.Start());
  const RunResult r = RunChild(d, 40, {});
  INFO(r.err);
  const int want_flags = static_cast<int>(CounterHere() ? ATR_RING_FLAG_COUNTER : 0);
  REQUIRE(r.exit_code == 20 + want_flags);
  if (!CounterHere()) WARN("the cycle counter is not usable on this machine: the monotonic path was tested");
  CheckPlacement(ExitSave(d), 40);
}

TEST_CASE("ring clock: ATRACE_RING_CLOCK=monotonic stamps with CLOCK_MONOTONIC, placed within 2 ms the same") {
  DaemonProcess d;
  REQUIRE(d.Start());
  const RunResult r = RunChild(d, 40, {{"ATRACE_RING_CLOCK", "monotonic"}});
  INFO(r.err);
  REQUIRE(r.exit_code == 20);  // no ATR_RING_FLAG_COUNTER
  CheckPlacement(ExitSave(d), 40);
}

TEST_CASE("ring clock: an ATRACE_RING_CLOCK value that means nothing is named on stderr") {
  DaemonProcess d;
  REQUIRE(d.Start());
  const RunResult r = RunChild(d, 3, {{"ATRACE_RING_CLOCK", "tsc"}});
  CHECK(r.err.find("ATRACE_RING_CLOCK=tsc is neither monotonic nor auto") != std::string::npos);
  CHECK(r.exit_code == 20 + static_cast<int>(CounterHere() ? ATR_RING_FLAG_COUNTER : 0));
  CheckPlacement(ExitSave(d), 3);
}
