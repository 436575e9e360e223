// The listening socket: adopted from systemd socket activation (sd_listen_fds, checked
// with sd_is_socket_unix), or bound by the daemon itself. A stale socket file is replaced
// only if nobody answers on it; if another daemon does, start-up stops with a clear message.
// A socket the daemon bound is removed at its clean stop; systemd's is systemd's.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "atraced/common/log.h"
#include "atraced/base/status.h"
#include "atraced/ipc/asio.h"

namespace atraced {

struct ListenSocketOptions {
  std::string path;                  // used when systemd passes nothing
  std::optional<std::string> group;  // chgrp of a socket we bind; mode is always 0660
  // The path is the default one (/run/atraced, $XDG_RUNTIME_DIR): its directory is made
  // (0755, logged) if missing. A path the user gave must be in a directory that exists: a
  // typo there is an error, not a new tree.
  bool make_directory = false;
};

// The socket file a daemon bound itself (not one systemd passed): removed at a clean stop,
// but only if the path still names it (a later daemon may have replaced it).
struct BoundSocketFile {
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
};

struct ListenSocket {
  LocalAcceptor acceptor;
  std::string description;  // "PATH" or "PATH (socket activation)"
  std::optional<BoundSocketFile> bound;
};

// Before the daemon makes anything (its trace root): whether this user may make the default
// socket, when systemd passes none. A user other than root with no XDG_RUNTIME_DIR falls back
// to /run/atraced, which only root may create: that stops start-up at once, naming --socket
// and XDG_RUNTIME_DIR, rather than after a trace root was made and a bind failed.
Status CheckDefaultSocketPlace(const std::string& default_path);

Result<ListenSocket> OpenListenSocket(asio::io_context& io, const ListenSocketOptions& options, Logger& log);

// At a clean stop: unlinks the bound socket file if it is still the one bound.
void RemoveSocketFile(const BoundSocketFile& file, Logger& log);

}  // namespace atraced
