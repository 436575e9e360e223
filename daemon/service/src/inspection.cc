#include "inspection.h"

#include <algorithm>
#include <string>
#include <utility>

namespace atraced {
namespace {

CrashFacts NoInspector() {
  return {"(not listed: this daemon has no crash inspector)\n", "(none: this daemon has no unwinder)\n",
          "(not read: this daemon has no crash inspector)\n"};
}

}  // namespace

bool Inspection::TakeUnwind(uint32_t uid) {
  const auto now = clock_.Now();
  for (auto it = unwinds_by_uid_.begin(); it != unwinds_by_uid_.end();) {  // forget what is a minute old
    auto& times = it->second;
    times.erase(std::remove_if(times.begin(), times.end(), [&](auto t) { return now - t >= std::chrono::minutes(1); }),
                times.end());
    it = times.empty() ? unwinds_by_uid_.erase(it) : std::next(it);
  }
  auto& times = unwinds_by_uid_[uid];
  if (times.size() >= limits_.crash_unwinds_per_uid_per_minute) return false;
  times.push_back(now);
  return true;
}

uint64_t Inspection::Look(const CrashTarget& target, std::optional<uint32_t> payer, Done done) {
  const uint64_t token = next_token_++;
  waiting_.emplace(token, std::move(done));
  CrashInspector* inspector = deps_.crash_inspector;
  const bool unwind = inspector != nullptr && (!payer || TakeUnwind(*payer));
  const auto budget = unwind ? limits_.crash_budget : std::chrono::milliseconds(0);
  const uint32_t limit = limits_.crash_unwinds_per_uid_per_minute;
  // Off the loop: a look takes up to the unwind deadline, and the process waits meanwhile.
  deps_.crash_runner->Run(
      target.uid, [inspector, target, budget]() { return inspector ? inspector->Inspect(target, budget) : NoInspector(); },
      [this, token, no_budget = inspector != nullptr && !unwind, payer, limit](CrashFacts facts) {
        if (no_budget) {
          facts.backtrace = "(none: uid " + std::to_string(*payer) + " already had " + std::to_string(limit) +
                            " crashes or dumps unwound in the last minute)\n";
        }
        Answer(token, std::move(facts));
      });
  return token;
}

void Inspection::Answer(uint64_t token, CrashFacts facts) {
  auto it = waiting_.find(token);
  if (it == waiting_.end()) return;
  Done done = std::move(it->second);
  waiting_.erase(it);
  done(std::move(facts));
}

}  // namespace atraced
