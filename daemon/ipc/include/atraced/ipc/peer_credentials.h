// SO_PEERCRED: the kernel's word on who is at the other end of a Unix socket.
#pragma once

#include <optional>

#include "atraced/service/trace_service.h"

namespace atraced {

std::optional<PeerCredentials> ReadPeerCredentials(int fd);

}  // namespace atraced
