// One look at a process from outside, whatever asked for it: CRASH (a fatal signal),
// STACK_DUMP (CANN's on-demand dump), PROCESS_DUMP (`atracectl dump`) and a dump the daemon
// starts itself. Each caller checks who may look at whom and that the process is still the
// one that connected; this step does the rest alike for all of them:
//  - the unwind budget: at most crash_unwinds_per_uid_per_minute unwinds a minute per uid
//    (a look past it still lists threads and maps, and the backtrace says why no stacks);
//  - the look itself, by the CrashInspector on the CrashRunner's thread, never the loop's
//    (or the facts that say this daemon has none);
//  - the answer back on the loop, to a callback found by its token: Forget and ForgetAll
//    make a runner's late answer find nothing (its asker went, the daemon is stopping).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "atraced/common/clock.h"
#include "atraced/processes/crash_inspector.h"
#include "service_context.h"

namespace atraced {

class Inspection {
 public:
  using Done = std::function<void(CrashFacts)>;

  explicit Inspection(const ServiceContext& ctx) : clock_(*ctx.deps.clock), deps_(ctx.deps), limits_(ctx.limits) {}

  // Looks at `target` and calls `done` with what was seen, on the loop, once (never if
  // forgotten first). The unwind is charged to `payer`'s budget (nullopt: to nobody's, for
  // root's dumps); without budget left, threads and maps only. Returns the look's token.
  uint64_t Look(const CrashTarget& target, std::optional<uint32_t> payer, Done done);
  // The look's answer goes nowhere.
  void Forget(uint64_t token) { waiting_.erase(token); }
  void ForgetAll() { waiting_.clear(); }

 private:
  // Whether uid may have another unwind now; counts it.
  bool TakeUnwind(uint32_t uid);
  void Answer(uint64_t token, CrashFacts facts);

  Clock& clock_;
  const ServiceDependencies& deps_;  // the inspector and the runner it looks on
  const ServiceLimits& limits_;      // crash_budget and the per-uid limit, which SIGHUP may change
  std::map<uint64_t, Done> waiting_;
  uint64_t next_token_ = 1;
  std::unordered_map<uint32_t, std::vector<std::chrono::system_clock::time_point>> unwinds_by_uid_;  // the last minute's
};

}  // namespace atraced
