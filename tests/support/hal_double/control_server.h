// The fake device's control socket: a Unix stream socket; each connection sends command
// lines and gets one reply line per command. Connections are served on their own threads,
// so a "flush" that waits does not hold up another test thread's commands.
#pragma once

#include <string>

#include "device_commands.h"

namespace atraced::hal_double::device {

// Binds and listens at `path` (replacing a stale socket); -1 on failure.
int ListenControl(const std::string& path);
// Serves connections until a "quit"; returns then (the caller exits the process).
void ServeControl(int listen_fd, Commands& commands);

}  // namespace atraced::hal_double::device
