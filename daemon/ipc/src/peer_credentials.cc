#include "atraced/ipc/peer_credentials.h"

#include <sys/socket.h>

namespace atraced {

std::optional<PeerCredentials> ReadPeerCredentials(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return std::nullopt;
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

}  // namespace atraced
