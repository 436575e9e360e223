// The text of the report a stackcore dir starts with: the one atraced writes at a CRASH
// (the process waited while the daemon looked at it) and the one it writes for a death
// without GOODBYE. Pure functions of what the service knew: testable without a process.
#pragma once

#include <chrono>
#include <string>

#include "atraced/processes/crash_inspector.h"
#include "atraced/processes/process_table.h"
#include "atraced/proto/codec.h"
#include "client.h"

namespace atraced {

// CANN's line time, "YYYY-MM-DD hh:mm:ss.mmm.uuu".
std::string HumanTime(std::chrono::system_clock::time_point when);
// Control characters (and the backslash) as \xNN: a report is one line per fact.
std::string Printable(const std::string& text);

struct DeathFacts {
  std::string how;  // "killed by signal 9 (SIGKILL)", ...
  std::string oom;  // the OOM line, or "" when the end is not a possible OOM kill
  std::chrono::system_clock::time_point closed{};   // the connection's close
  std::chrono::system_clock::time_point written{};  // now
};
// The report of a ring client that ended without GOODBYE. `rings` and `ring_names` are the
// rings saved beside it.
std::string DeathReportText(const Client& c, const DeathFacts& death, size_t rings, const std::string& ring_names);
// What the end of a departed process says: the signal (0 if none could be read) and how.
std::string DescribeEnd(const ProcessEnd& end, int* signo);

// The report of a CRASH, by the process `pid` whose rings `holder` holds.
std::string CrashReportText(int32_t pid, const Client& holder, const proto::Crash& m, const CrashFacts& facts,
                            std::chrono::system_clock::time_point written, size_t rings, const std::string& ring_names);
// The report of a STACK_DUMP (CANN's on-demand stack dump): the process runs on. The same
// sections as a crash report, so that asys reads both alike.
std::string StackDumpReportText(int32_t pid, const Client& holder, const proto::StackDump& m, const CrashFacts& facts,
                                std::chrono::system_clock::time_point written, size_t rings,
                                const std::string& ring_names);

// The report of a PROCESS_DUMP (atracectl dump): a process that asked for nothing, looked at
// from outside while it runs on, at the request of `asker` (pid and uid). The same sections,
// named as STACK_DUMP's (signal 35, no signal sent), so that asys reads it alike. A dump the
// hang watch took by itself has its `hang` line ("pid 7 stalled 12 s, blocked ..."), a
// `devices` line saying the NPUs' health is not recorded, and no asker.
std::string ProcessDumpReportText(const Client& holder, const PeerCredentials& asker, const CrashFacts& facts,
                                  std::chrono::system_clock::time_point written, size_t rings,
                                  const std::string& ring_names, const std::string& hang = "");

}  // namespace atraced
