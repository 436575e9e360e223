// The control protocol of the fake device: one command per line, one reply line
// ("ok ..." or "err ..."). README.md lists the commands.
#pragma once

#include <string>

#include "device_server.h"
#include "device_sessions.h"

namespace atraced::hal_double::device {

class Commands {
 public:
  Commands(const DeviceOptions& options, SessionStore& store) : options_(options), store_(store) {}
  // The reply, without the newline; *quit set by "quit".
  std::string Execute(const std::string& line, bool* quit);

 private:
  std::string Ts(const std::vector<std::string>& args);
  std::string Utrace(const std::vector<std::string>& args);
  std::string Hostile(const std::vector<std::string>& args);
  std::string EndlessChain(const std::vector<std::string>& args);
  std::string Queue(int pid, Outgoing message);

  const DeviceOptions options_;
  SessionStore& store_;
};

}  // namespace atraced::hal_double::device
