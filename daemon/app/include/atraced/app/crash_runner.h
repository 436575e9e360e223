// The daemon's CrashRunner (core/crash_inspector.h): inspections run one at a time on a
// thread of their own, and their results are posted back to the event loop, so a crash
// stalls nobody but the crashed process (which waits in its handler anyway).
//
// One thread is enough: crashes are rare, each inspection is bounded by its budget, and one
// uid gets a few unwinds a minute (ServiceOptions::crash_unwinds_per_uid_per_minute). A
// crash queued behind another waits for it; its process's handler waits up to its own bound.
//
// Lifetime: declare it after the io_context and before nothing that `done` uses outlives:
// the destructor lets the running inspection finish and drops the queued ones; results
// posted to a loop that no longer runs are never called.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "atraced/processes/crash_inspector.h"
#include "atraced/ipc/asio.h"

namespace atraced {

class ThreadCrashRunner final : public CrashRunner {
 public:
  explicit ThreadCrashRunner(asio::io_context& io);
  ~ThreadCrashRunner() override;
  ThreadCrashRunner(const ThreadCrashRunner&) = delete;
  ThreadCrashRunner& operator=(const ThreadCrashRunner&) = delete;

  void Run(std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) override;

 private:
  struct Job {
    std::function<CrashFacts()> inspect;
    std::function<void(CrashFacts)> done;
  };
  void Loop();

  asio::io_context& io_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace atraced
