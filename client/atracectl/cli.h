// atracectl's command line: global options, sub-command dispatch and exit codes.
#pragma once

#include <string>
#include <vector>

#include "atraced/atrace_client.hpp"

namespace atracectl {

// Exit codes, documented in docs/CLIENT.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // the daemon refused, failed, or could not be reached
inline constexpr int kExitUsage = 2;   // a bad command line (or an unreadable FILE)

struct Globals {
  std::string socket;  // --socket; "" = the library's default resolution
};

// Arguments after the sub-command name.
using Args = std::vector<std::string>;

int Main(int argc, char** argv);

int RunEmit(const Globals& g, const Args& args);
int RunStatus(const Globals& g, const Args& args);
int RunList(const Globals& g, const Args& args);
int RunDu(const Globals& g, const Args& args);
int RunVacuum(const Globals& g, const Args& args);
int RunShow(const Globals& g, const Args& args);
int RunInfo(const Globals& g, const Args& args);
int RunExport(const Globals& g, const Args& args);
int RunDump(const Globals& g, const Args& args);
int RunMerge(const Globals& g, const Args& args);
int RunHang(const Globals& g, const Args& args);
// hang --journal DIR (journal/cmd_hang_journal.cc); RunHang hands it over.
int RunHangJournal(const Globals& g, const Args& args);

// Connects; on failure prints why on stderr and returns an empty client. `options` beyond
// the socket (which --socket sets) are the command's: a dump waits longer than a query.
atrace::Client Connect(const Globals& g, atrace::Client::Options options = {});
// Prints "atracectl: <what>: <error> [(daemon: <message>)]" and returns kExitFailed.
int Fail(const atrace::Client& client, const std::string& what, std::error_code ec);
// Prints "atracectl: <message>" and the hint to use --help; returns kExitUsage.
int UsageError(const std::string& message);
// "atracectl 0.1.0 (protocol 1.1)".
std::string VersionLine();

}  // namespace atracectl
