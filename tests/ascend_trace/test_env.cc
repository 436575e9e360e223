#include "test_env.h"

#include <cstdlib>

namespace ascend_trace_test {

namespace {
// Before any test runs (and before the library's first connect).
const bool kDefaultSocket = [] { return ::setenv("ATRACED_SOCKET", kNoDaemonSocket, 1) == 0; }();
}  // namespace

SocketEnv::SocketEnv(const std::string& path) {
  (void)kDefaultSocket;
  const char* old = std::getenv("ATRACED_SOCKET");
  previous_ = old != nullptr ? old : kNoDaemonSocket;
  ::setenv("ATRACED_SOCKET", path.c_str(), 1);
}

SocketEnv::~SocketEnv() { ::setenv("ATRACED_SOCKET", previous_.c_str(), 1); }

}  // namespace ascend_trace_test
