// How an event directory came to be, read from its kind and, for a stackcore directory, from
// the head of its report (the stackcore_tracer_*.txt the daemon writes): list's HOW column
// and the timeline's marks both say it this way.
//
//   report          a schedule directory: the process asked for its traces to be kept
//   exit            an exit directory: the traces a process kept as it exited
//   crash SIGSEGV   a report that the process caught a fatal signal
//   killed SIGKILL  a report that it ended without GOODBYE, killed by that signal
//   oom             ... and the OOM killer's count says it did it
//   exited N        ... and it exited with status N
//   died            ... and how is not known
//   dump            a report that the process asked for its stacks (it runs on)
//   stackcore       a stackcore directory without a report of those forms
// A report is the file's word: a process may write a file of that form itself (cmd_info.cc).
#pragma once

#include <string>
#include <string_view>

#include "atraced/atrace_client.hpp"

namespace atracectl {

enum class Origin { kReport, kExit, kCrash, kKilled, kOom, kExited, kDied, kDump, kHang, kStackcore };

struct DirOrigin {
  Origin origin = Origin::kStackcore;
  std::string detail;  // the signal's name of a crash or a kill ("SIGSEGV"), the status of an exit ("" otherwise)
  int signo = 0;       // the signal's number of a crash or a kill, 0 unknown
  // "crash SIGSEGV", "oom", ... (escaped for a terminal by whoever shows it: it is the file's).
  std::string Label() const;
  // A crash, a kill, an OOM kill, an exit without GOODBYE, an unknown end.
  bool IsDeath() const { return origin == Origin::kKilled || origin == Origin::kOom || origin == Origin::kExited || origin == Origin::kDied; }
};

// What a report's text (its first lines are enough) says of how its directory came to be.
DirOrigin ReportOrigin(std::string_view report);

// The origin of the directory `dir` (the entry's path under <root>/atrace): by its kind, and
// for a stackcore directory by the first report in it (its first 4 KiB).
DirOrigin OriginOf(const atrace::ListEntry& entry, const std::string& dir);

}  // namespace atracectl
