// What the daemon learns from outside a process that caught a fatal signal (CRASH, protocol
// 1.1), while the process waits in its handler. An interface so that TraceService stays
// testable without ptrace: daemon/crash has the real one (a helper process that unwinds with
// elfutils' libdwfl), tests a fake.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace atraced {

struct CrashFacts {
  std::string threads;    // one line per thread: "tid name"; or a line saying why not
  std::string backtrace;  // one line per frame of the crashing thread; or a line saying why not
  std::string maps;       // /proc/<pid>/maps; or a line saying why not
};

class CrashInspector {
 public:
  virtual ~CrashInspector() = default;
  // Must return within about `budget` whatever the process does (attaching may block): the
  // daemon's event loop waits for it, and the process waits for the daemon. A budget of 0:
  // threads and maps only, no unwinding.
  virtual CrashFacts Inspect(pid_t pid, pid_t tid, std::chrono::milliseconds budget) = 0;
};

}  // namespace atraced
