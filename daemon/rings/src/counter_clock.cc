#include "atraced/rings/counter_clock.h"

#include <time.h>

namespace atraced::core {

CounterClock::CounterClock(Logger* log, const CounterEvidence* evidence_for_tests)
    : log_(log), fixed_evidence_(evidence_for_tests) {
  readable_ = fixed_evidence_ != nullptr ? fixed_evidence_->instruction_runs : CounterInstructionRuns(nullptr);
  granted_.store(true, std::memory_order_relaxed);
  if (fixed_evidence_ == nullptr) cpu_says_invariant_ = CpuSaysCounterInvariant();
  if (!readable_) {
    Check("", false);
  } else {
    history_.Add(SampleClocks(true));
    const timespec pause{0, kCalibrationNs};
    ::nanosleep(&pause, nullptr);
    Check(history_.Add(SampleClocks(true)), true);
  }
  LogOnce();
}

void CounterClock::Tick() {
  if (readable_) {
    const std::string verdict = history_.Add(SampleClocks(true));
    ++ticks_;
    Check(verdict, ticks_ % kProbeEveryTicks == 0);
  }
  LogOnce();
}

ClockSample CounterClock::SampleForSave() {
  const ClockSample now = SampleClocks(readable_);
  if (readable_) {
    const std::string verdict = history_.Add(now);
    if (!verdict.empty()) Check(verdict, false);
  }
  return now;
}

std::string CounterClock::why_not() const {
  std::lock_guard lock(why_mu_);
  return why_not_;
}

void CounterClock::Check(const std::string& rate_problem, bool probe_cpus) {
  if (!Granted()) return;
  CounterEvidence e;
  if (fixed_evidence_ != nullptr) {
    e = *fixed_evidence_;
  } else {
    e.instruction_runs = CounterInstructionRuns(&e.instruction_problem);
    e.cpu_says_invariant = cpu_says_invariant_;
    if (probe_cpus && e.instruction_runs) e.cpus = ReadCounterOnEachCpu();
  }
  if (e.rate_problem.empty()) e.rate_problem = rate_problem;
  if (e.ticks_per_ns <= 0) {
    const std::vector<ClockSnapshot> newest = history_.Since(INT64_MAX);
    if (!newest.empty()) e.ticks_per_ns = newest.back().ticks_per_ns;
  }
  const CounterVerdict v = JudgeCounter(e);
  if (v.trusted) return;
  std::lock_guard lock(why_mu_);
  if (!granted_.exchange(false)) return;  // another thread said it first
  why_not_ = v.why;
}

void CounterClock::LogOnce() {
  // On the loop (or at construction): a save that found the break only records it.
  if (Granted() || logged_ || log_ == nullptr) return;
  logged_ = true;
  log_->Warning("cycle counter: not granted to libraries that connect from now on (they stamp with CLOCK_MONOTONIC): ",
                why_not());
}

}  // namespace atraced::core
