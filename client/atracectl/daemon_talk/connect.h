// Reaching the daemon: a connection, or a message that says why there is none (the socket
// tried, the cause, what to do), and one way to report what the daemon refused.
#pragma once

#include <string>
#include <system_error>

#include "atraced/atrace_client.hpp"
#include "common/command_line.h"

namespace atracectl {

// Connects; on failure prints why on stderr and returns an empty client. `options` beyond
// the socket (which --socket sets) are the command's: a dump waits longer than a query.
atrace::Client Connect(const Globals& g, atrace::Client::Options options = {});
// Prints "atracectl: <what>: <error> [(daemon: <message>)]" and returns kExitFailed.
int Fail(const atrace::Client& client, const std::string& what, std::error_code ec);

}  // namespace atracectl
