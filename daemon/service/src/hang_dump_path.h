// The one place where the hang watch (hang_watch.h) reaches the dump path: the dump of a
// live process from outside that PROCESS_DUMP makes (process_dumps.h), taken by the daemon
// itself. Kept to one narrow function so that a change of that path changes this file alone.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "client.h"

namespace atraced {

class ProcessDumps;

struct HangTarget {
  ClientId holder = 0;  // the connection holding the process's rings
  std::string note;     // the report's `hang:` line
};
struct HangDumped {
  int32_t pid = 0;
  std::string dir;        // the directory written, or "" (then `refused`)
  std::string refused;
  std::string backtrace;  // every thread's stack as the report has it ("Thread N (TID, NAME)", "#k ..." lines)
};

// Dumps `targets` one after another, each as its own process's user, the directories marked
// as the hang watch's; `done` runs on the loop with one HangDumped per target, in order.
void DumpForHang(ProcessDumps& dumps, std::vector<HangTarget> targets,
                 std::function<void(std::vector<HangDumped>)> done);

}  // namespace atraced
