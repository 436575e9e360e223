// Shared by the libascend_trace tests.
#pragma once

#include <string>

namespace ascend_trace_test {

// A socket path where nothing listens: tests that do not want a daemon point the library
// there ($ATRACED_SOCKET), so a developer's running atraced never receives their rings.
inline const char* kNoDaemonSocket = "/nonexistent/atraced-test.sock";

// Points the library at `path` for the rest of the test (restored by the destructor).
class SocketEnv {
 public:
  explicit SocketEnv(const std::string& path);
  ~SocketEnv();

 private:
  std::string previous_;
};

}  // namespace ascend_trace_test
