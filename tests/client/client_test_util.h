// Helpers for the client library tests: a daemon scripted byte by byte, for behaviour the
// real one cannot be made to show (holding replies back, hanging up mid-write), and a handle
// opener.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "atraced/atrace_client.h"
#include "support/temp_dir.h"

namespace atrace_test {

// Opens a handle on `socket` with the given timeouts; REQUIREs success.
atrace_client* OpenClient(const std::string& socket, int io_timeout_ms = 2000, unsigned max_in_flight = 0);

// A Unix socket in a temp dir served by `handler(fd)` on one accepted connection, in a
// thread: the handler plays the daemon, byte by byte. It owns nothing: the fd is closed after
// it returns.
class ScriptedDaemon {
 public:
  explicit ScriptedDaemon(std::function<void(int fd)> handler);
  ~ScriptedDaemon();
  const std::string& socket() const { return socket_; }

 private:
  atraced::testing::TempDir tmp_;
  std::string socket_;
  int listen_fd_ = -1;
  std::thread thread_;
};

// For ScriptedDaemon handlers: read exactly one frame (header + payload); false on EOF/timeout.
struct Frame {
  uint16_t opcode = 0;
  uint32_t request_id = 0;
  std::vector<uint8_t> payload;
};
bool ReadFrame(int fd, Frame* frame, int timeout_ms = 5000);
// Sends an OK reply with `body` to `request`.
void ReplyOk(int fd, const Frame& request, const std::vector<uint8_t>& body = {});
// Answers HELLO (granting nothing); false if the first frame is not HELLO.
bool ServeHello(int fd);


}  // namespace atrace_test
