// The daemon's CrashInspector: threads and maps from /proc, the backtrace from the unwind
// helper (unwind_helper.h), spawned per crash and killed at the deadline.
#pragma once

#include <atomic>
#include <string>

#include "atraced/core/crash_inspector.h"

namespace atraced::crash {

class ProcCrashInspector final : public CrashInspector {
 public:
  // `helper` is the executable run as `helper --crash-unwind-helper PID TID`: the daemon
  // itself (/proc/self/exe) in production, which works even after a package upgrade
  // replaced the file. `all_threads`: the other threads' backtraces follow the crashing one's
  // (config crash-all-threads).
  explicit ProcCrashInspector(std::string helper = "/proc/self/exe", std::string proc_root = "/proc",
                              bool all_threads = false)
      : helper_(std::move(helper)), proc_root_(std::move(proc_root)), all_threads_(all_threads) {}

  CrashFacts Inspect(const CrashTarget& target, std::chrono::milliseconds budget) override;
  // For the next crash (SIGHUP: crash-all-threads). Called on the event loop while Inspect
  // may run on the crash runner's thread: hence the atomic.
  void set_all_threads(bool all_threads) { all_threads_.store(all_threads); }

 private:
  std::string Threads(pid_t pid) const;
  std::string Maps(pid_t pid) const;
  std::string Backtrace(pid_t pid, pid_t tid, std::chrono::milliseconds budget) const;

  std::string helper_;
  std::string proc_root_;
  std::atomic<bool> all_threads_{false};
};

}  // namespace atraced::crash
