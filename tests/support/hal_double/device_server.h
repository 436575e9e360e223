// The trace server's connection side (device-channel.md §4.2): accepts HDC sessions of
// service 7 for one device and answers each by its first message: hello (echo +
// HDC_END_MSG, close), long link (LONG_LINK_DEFAULT, then TraceStartMsg within 3 s: a
// session node), end (the node to the deleted list, close), anything else (close).
#pragma once

#include "ascend_hal_double.h"
#include "device_sessions.h"

namespace atraced::hal_double::device {

struct DeviceOptions {
  int local_id = 0;
  int phy_id = 0;
  bool hello_silent = false;      // accept a hello and never answer it
  bool hello_mismatch = false;    // answer a hello with a wrong magic
  bool refuse_long_link = false;  // close every long link at once
  bool close_long_links = false;  // take every long link's start message, then close it
};

class DeviceServer {
 public:
  DeviceServer(const DeviceOptions& options, SessionStore& store) : options_(options), store_(store) {}
  // Accepts sessions until the server is destroyed; one detached thread per session.
  void AcceptLoop(HDC_SERVER server);

 private:
  void Handle(HDC_SESSION session);
  void HandleLongLink(HDC_SESSION session, int pid, int dev);
  void HandleHello(HDC_SESSION session, int pid, std::string_view payload);

  const DeviceOptions options_;
  SessionStore& store_;
};

}  // namespace atraced::hal_double::device
