// Where to find the daemon, and a connect() that cannot outlive its deadline.
#pragma once

#include <string>
#include <vector>

#include "deadline.h"
#include "fd.h"

namespace atrace_client_internal {

// The socket paths to try, in order: the explicit path alone if given, else
// $ATRACED_SOCKET alone if set, else the system unit's socket and then the user unit's
// ($XDG_RUNTIME_DIR/atraced.sock, when that variable is set).
std::vector<std::string> CandidateSocketPaths(const char* explicit_path);

// Connects a non-blocking, close-on-exec Unix stream socket to `path`. Returns 0 and the
// socket in *out, or -errno: -ENOENT (no such socket), -ECONNREFUSED (nobody listens),
// -ETIMEDOUT (backlog full until the deadline), -ENAMETOOLONG (path does not fit sun_path).
int ConnectUnix(const std::string& path, const Deadline& deadline, Fd* out);

}  // namespace atrace_client_internal
