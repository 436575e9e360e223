#include "bench_client.h"

#include "bench_util.h"

namespace atraced_bench {

void Check(int rc, const std::string& what, atrace_client* c) {
  if (rc == 0) return;
  std::string msg = what + ": " + atrace_client_strerror(rc);
  if (c != nullptr && *atrace_client_last_message(c) != '\0') msg += std::string(" (") + atrace_client_last_message(c) + ")";
  Fail(msg);
}

atrace_client* OpenClient(const std::string& socket) {
  atrace_client_options o;
  atrace_client_options_init(&o);
  o.socket_path = socket.c_str();
  o.connect_timeout_ms = 10000;
  o.io_timeout_ms = 30000;  // generous: 64 clients on 2 cores must not time out
  atrace_client* c = nullptr;
  Check(atrace_client_open(&o, &c), "atrace_client_open " + socket);
  return c;
}

}  // namespace atraced_bench
