// The listening socket: adopted from systemd socket activation (sd_listen_fds, checked
// with sd_is_socket_unix), or bound by the daemon itself. A stale socket file is replaced
// only if nobody answers on it; if another daemon does, start-up stops with a clear message.
#pragma once

#include <optional>
#include <string>

#include "atraced/common/log.h"
#include "atraced/common/status.h"
#include "atraced/ipc/asio.h"

namespace atraced {

struct ListenSocketOptions {
  std::string path;                  // used when systemd passes nothing
  std::optional<std::string> group;  // chgrp of a socket we bind; mode is always 0660
};

struct ListenSocket {
  LocalAcceptor acceptor;
  std::string description;  // "PATH" or "PATH (socket activation)"
};

Result<ListenSocket> OpenListenSocket(asio::io_context& io, const ListenSocketOptions& options, Logger& log);

}  // namespace atraced
