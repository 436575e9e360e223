// What a user is told when a daemon socket cannot be used, from what the file system says of
// the path: atracectl and libascend_trace give the same cause and remedy, each after its own
// prefix.
#pragma once

#include <string>

namespace atraced {

// For a refused connect: "PATH is a regular file, not a socket" when PATH exists and is not a
// socket (connect says ECONNREFUSED for those too), else "" (a socket nobody listens on).
std::string DescribeNonSocket(const std::string& path);

// For a connect denied by permissions: whom the socket is for and what to do. A socket of
// group root is for root alone: joining root is no remedy, so the administrator is asked to
// give it a group (socket-group) instead.
std::string SocketAccessRemedy(const std::string& path);

}  // namespace atraced
