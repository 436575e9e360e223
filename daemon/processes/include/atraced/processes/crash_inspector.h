// What the daemon learns from outside a process that caught a fatal signal (CRASH, protocol
// 1.1), while the process waits in its handler. An interface so that TraceService stays
// testable without ptrace: daemon/crash has the real one (a helper process that unwinds with
// elfutils' libdwfl), tests a fake.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace atraced {

struct CrashFacts {
  std::string threads;    // one line per thread: "tid name"; or a line saying why not
  std::string backtrace;  // one line per frame of the crashing thread; or a line saying why not
  std::string maps;       // /proc/<pid>/maps; or a line saying why not
  // A live look (CrashTarget::live): the process's threads, the stacks the inspector read,
  // the stacks the backtrace above holds (counted apart: what was read is not always what
  // was kept), the threads the backtrace names, and the longest any one was held stopped.
  uint32_t thread_count = 0;
  uint32_t stacks_read = 0;
  uint32_t stacks_written = 0;
  uint32_t threads_written = 0;
  uint32_t max_stop_us = 0;
};

// Who crashed, as the kernel told the daemon: `pid` in the daemon's pid namespace and
// `uid`/`gid` from SO_PEERCRED; `tid` as the process itself sees it (gettid() in its own,
// innermost pid namespace), because that is all a containerized client can send.
struct CrashTarget {
  pid_t pid = 0;
  pid_t tid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // Unwind every thread, whatever crash-all-threads says: CANN's stack dump of every thread
  // (STACK_DUMP with ATR_STACK_DUMP_ALL_THREADS).
  bool every_thread = false;
  // A process that runs on and asked for nothing (PROCESS_DUMP): every thread, each stopped
  // alone for a moment and let go before the next; `tid` is unused.
  bool live = false;
};

class CrashInspector {
 public:
  virtual ~CrashInspector() = default;
  // Must return within about `budget` whatever the process does (attaching may block): the
  // process waits for the daemon, and without a CrashRunner so does the event loop. A budget of 0:
  // threads and maps only, no unwinding. Nothing is learnt that `target.uid`/`target.gid`
  // could not read themselves.
  virtual CrashFacts Inspect(const CrashTarget& target, std::chrono::milliseconds budget) = 0;
};

// Runs an inspection somewhere other than the event loop, so that one process's crash does
// not stall every other client for the length of an unwind (up to the budget), and hands
// the facts back on the event loop. The daemon's runs `inspect` on a thread of its own and
// posts `done` to the loop (daemon/app); tests keep the jobs and finish them when they like.
// `uid` is the crashed process's: the daemon's runner serves the uids with crashes waiting
// in turn, so one user's crash loop cannot hold another user's crash past its handler's wait.
class CrashRunner {
 public:
  virtual ~CrashRunner() = default;
  virtual void Run(uint32_t uid, std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) = 0;
};

}  // namespace atraced
