// Descriptors over a Unix socket (SCM_RIGHTS), in both directions: the daemon's FILE_GET_FD
// reply, a client's RING_REGISTER memfd. Shared so the control-message arithmetic is written
// once, for the daemon and both client libraries.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>
#include <vector>

#include "atraced/base/unique_fd.h"

namespace atraced {

// Like sendmsg: returns the bytes sent or -1 with errno. `fd` < 0 sends no descriptor.
// The kernel delivers the descriptor with the first byte sent, so a caller that must
// retry a short send passes the descriptor only on the first attempt.
ssize_t SendWithFd(int socket, const void* data, size_t len, int fd, int flags);

// One recvmsg(2) into `buf` that takes every descriptor sent with those bytes (close-on-
// exec) and appends it to `fds` as an owned UniqueFd, so none can leak; a plain read would
// make the kernel drop them silently. Room for `max_fds` descriptors; more sets *truncated
// (the sender is out of step). Returns the bytes read or -1 with errno, like recvmsg.
ssize_t RecvWithFds(int socket, void* buf, size_t len, int flags, size_t max_fds, std::vector<UniqueFd>* fds,
                    bool* truncated);

}  // namespace atraced
