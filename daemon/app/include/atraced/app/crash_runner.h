// The daemon's CrashRunner (processes/crash_inspector.h): inspections run one at a time on
// a thread of their own, and their results are posted back to the event loop, so a crash
// stalls nobody but the crashed process (which waits in its handler anyway).
//
// One thread is enough: crashes are rare, each inspection is bounded by its budget, and one
// uid gets a few unwinds a minute (ServiceLimits::crash_unwinds_per_uid_per_minute). The
// uids with crashes waiting are served in turn (an IoPool of one worker): a crash waits for
// the inspection running and at most one of each other uid's, never behind one user's crash
// loop, and its process's handler waits up to its own bound (5 s; the budget is 2 s).
//
// Lifetime: declare it after the io_context and before nothing that `done` uses outlives:
// the destructor lets the running inspection finish and drops the queued ones; results
// posted to a loop that no longer runs are never called.
#pragma once

#include <functional>

#include "atraced/io/io_pool.h"
#include "atraced/ipc/asio.h"
#include "atraced/processes/crash_inspector.h"

namespace atraced {

class ThreadCrashRunner final : public CrashRunner {
 public:
  explicit ThreadCrashRunner(asio::io_context& io);
  ThreadCrashRunner(const ThreadCrashRunner&) = delete;
  ThreadCrashRunner& operator=(const ThreadCrashRunner&) = delete;

  void Run(uint32_t uid, std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) override;

 private:
  IoPool pool_;
};

}  // namespace atraced
