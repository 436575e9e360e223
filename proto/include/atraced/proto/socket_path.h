// Where the daemon listens when nobody says otherwise; the daemon and the client library
// resolve it the same way. Header-only so both sides share one definition.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace atraced::proto {

inline constexpr const char* kSystemSocketPath = "/run/atraced/atraced.sock";  // atraced.socket
inline constexpr const char* kSocketEnvVar = "ATRACED_SOCKET";

// The user unit's socket: $XDG_RUNTIME_DIR/atraced.sock, or "" when XDG_RUNTIME_DIR is unset.
inline std::string UserSocketPath() {
  const char* dir = std::getenv("XDG_RUNTIME_DIR");
  if (dir == nullptr || *dir == '\0') return "";
  return std::string(dir) + "/atraced.sock";
}

// The daemon's default: the system socket as root, the user socket otherwise (falling back
// to the system path when there is no runtime directory).
inline std::string DefaultDaemonSocketPath() {
  if (::geteuid() == 0) return kSystemSocketPath;
  std::string user = UserSocketPath();
  return user.empty() ? kSystemSocketPath : user;
}

}  // namespace atraced::proto
