// Parses one sub-command's arguments with Boost.Program_options, handling --help and
// usage errors the same way for every command.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>

#include "cli.h"

namespace atracectl {

// Returns the parsed map, or nullopt with *exit_code set: kExitOk after printing --help,
// kExitUsage after printing what was wrong.
std::optional<boost::program_options::variables_map> ParseCommand(
    const Args& args, const std::string& usage, boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional, int* exit_code);

}  // namespace atracectl
