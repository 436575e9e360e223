// What every verb of atracectl shares about its command line: the exit codes, the global
// options, one way to parse a verb's options (--help and usage errors alike for all), and
// the version line.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <vector>

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

// Prints "atracectl: <message>" and the hint to use --help; returns kExitUsage.
int UsageError(const std::string& message);
// "atracectl 0.1.0 (protocol 1.1)".
std::string VersionLine();

// Parses one sub-command's arguments with Boost.Program_options. Returns the parsed map, or
// nullopt with *exit_code set: kExitOk after printing --help, kExitUsage after printing what
// was wrong.
std::optional<boost::program_options::variables_map> ParseCommand(
    const Args& args, const std::string& usage, boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional, int* exit_code);

}  // namespace atracectl
