// One sendmsg(2) of bytes with at most one descriptor attached (SCM_RIGHTS) to their first
// byte: how atraced passes a descriptor in both directions (the daemon's FILE_GET_FD
// reply, a client's RING_REGISTER memfd). Shared so the control-message arithmetic is
// written once.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>

namespace atraced {

// Like sendmsg: returns the bytes sent or -1 with errno. `fd` < 0 sends no descriptor.
// The kernel delivers the descriptor with the first byte sent, so a caller that must
// retry a short send passes the descriptor only on the first attempt.
ssize_t SendWithFd(int socket, const void* data, size_t len, int fd, int flags);

}  // namespace atraced
