// Whether the daemon grants the cycle counter (counter_trust.h, counter_clock.h): a pure
// decision from measurements, and the grant ending, once, when a check fails.
#include <catch2/catch.hpp>

#include <sched.h>

#include <string>
#include <vector>

#include "atraced/rings/counter_clock.h"
#include "atraced/rings/counter_trust.h"

using atraced::core::CounterClock;
using atraced::core::CounterEvidence;
using atraced::core::CpuCounterReading;
using atraced::core::JudgeCounter;

namespace {

// Readings of `cpus` CPUs taken 10 µs apart, each bracketed by 1 µs, on a 2.5 GHz counter,
// CPU `off_cpu`'s counter `off_ns` ahead of the others.
CounterEvidence Good(int cpus = 4, int off_cpu = -1, int64_t off_ns = 0) {
  CounterEvidence e;
  e.cpu_says_invariant = true;
  e.instruction_runs = true;
  e.ticks_per_ns = 2.5;
  for (int i = 0; i < cpus; ++i) {
    const int64_t before = 1'000'000'000 + i * 10'000;
    const int64_t mid = before + 500;
    uint64_t counter = 5'000'000'000'000ull + static_cast<uint64_t>(static_cast<double>(mid) * 2.5);
    if (i == off_cpu) counter += static_cast<uint64_t>(static_cast<int64_t>(static_cast<double>(off_ns) * 2.5));
    e.cpus.push_back({i, before, counter, before + 1000});
  }
  return e;
}

}  // namespace

TEST_CASE("trust: CPUs whose counters agree, on an invariant counter, are trusted") {
  CHECK(JudgeCounter(Good()).trusted);
  CHECK(JudgeCounter(Good(4, 2, 50'000)).trusted);  // 50 µs apart: within the bound
}

TEST_CASE("trust: CPUs whose counters disagree are not, and the reason names them") {
  const auto v = JudgeCounter(Good(4, 2, 3'000'000));
  CHECK(!v.trusted);
  CHECK(v.why.find("CPU 2") != std::string::npos);
  CHECK(v.why.find("disagree by 2.99") != std::string::npos);  // 3 ms, less what the brackets explain
  // Behind the others is as bad as ahead.
  CHECK(!JudgeCounter(Good(4, 0, -400'000)).trusted);
}

TEST_CASE("trust: a bracket too wide to say anything is not evidence either way") {
  CounterEvidence e = Good(2, 1, 3'000'000);
  e.cpus[1].monotonic_after_ns = e.cpus[1].monotonic_before_ns + 5'000'000;  // preempted for 5 ms
  CHECK(JudgeCounter(e).trusted);
  // Nor is one CPU, or a rate not yet measured.
  CHECK(JudgeCounter(Good(1)).trusted);
  CounterEvidence no_rate = Good(4, 2, 3'000'000);
  no_rate.ticks_per_ns = 0;
  CHECK(JudgeCounter(no_rate).trusted);
}

TEST_CASE("trust: a rate that drifted, a counter that is not invariant, or rdtsc disabled: not trusted") {
  CounterEvidence drift = Good();
  drift.rate_problem = "the cycle counter ran 5.000 ms ahead of its rate";
  CHECK(JudgeCounter(drift).why == drift.rate_problem);
  CounterEvidence variant = Good();
  variant.cpu_says_invariant = false;
  CHECK(JudgeCounter(variant).why.find("invariant") != std::string::npos);
  CounterEvidence disabled = Good();
  disabled.instruction_runs = false;
  disabled.instruction_problem = "rdtsc is disabled for this process (PR_SET_TSC)";
  CHECK(JudgeCounter(disabled).why.find("PR_SET_TSC") != std::string::npos);
}

TEST_CASE("trust: the daemon's clock stops granting on the first failed check and says why, once") {
  std::vector<std::string> lines;
  atraced::Logger log([&](atraced::LogLevel, std::string_view m) { lines.emplace_back(m); });
  CounterEvidence e = Good();
  CounterClock trusted(&log, &e);
  CHECK(trusted.Granted());
  CHECK(lines.empty());
  CounterEvidence bad = Good(4, 3, 2'000'000);
  CounterClock skewed(&log, &bad);
  CHECK(!skewed.Granted());
  CHECK(skewed.why_not().find("CPU 3") != std::string::npos);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("not granted") != std::string::npos);
  skewed.Tick();
  skewed.Tick();
  CHECK(lines.size() == 1);
}

TEST_CASE("trust: this machine's CPUs can each be read, and the calling thread keeps its CPUs") {
  cpu_set_t before;
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  const std::vector<CpuCounterReading> r = atraced::core::ReadCounterOnEachCpu();
  CHECK(static_cast<int>(r.size()) == CPU_COUNT(&before));
  for (const CpuCounterReading& c : r) CHECK(c.monotonic_after_ns >= c.monotonic_before_ns);
  cpu_set_t after;
  REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
  CHECK(CPU_EQUAL(&before, &after));
}
