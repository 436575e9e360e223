// The daemon's CrashInspector: the unwind helper (unwind_helper.h), spawned per crash and
// killed at the deadline, reads the threads, the maps and the backtrace as the crashing
// user; the daemon itself reads nothing of the process.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "atraced/processes/crash_inspector.h"

namespace atraced::crash {

class ProcCrashInspector final : public CrashInspector {
 public:
  // `helper` is the executable run as `helper --crash-unwind-helper PID TID UID GID MODE`:
  // the daemon itself (/proc/self/exe) in production, which works even after a package
  // upgrade replaced the file. `all_threads`: the other threads' backtraces follow the
  // crashing one's (config crash-all-threads).
  explicit ProcCrashInspector(std::string helper = "/proc/self/exe", bool all_threads = false)
      : helper_(std::move(helper)), all_threads_(all_threads) {}

  // A budget of 0 still runs the helper, for threads and maps, within kFactsOnlyDeadline.
  CrashFacts Inspect(const CrashTarget& target, std::chrono::milliseconds budget) override;
  // For the next crash (SIGHUP: crash-all-threads). Called on the event loop while Inspect
  // may run on the crash runner's thread: hence the atomic.
  void set_all_threads(bool all_threads) { all_threads_.store(all_threads); }

  static constexpr std::chrono::milliseconds kFactsOnlyDeadline{1000};

 private:
  std::string helper_;
  std::atomic<bool> all_threads_{false};
};

}  // namespace atraced::crash
