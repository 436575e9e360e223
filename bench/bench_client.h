// libatrace_client for the bench's cases: a connection with generous timeouts (64 clients on
// 2 cores must not time out), closed by its owner, and a failed call turned into BenchError.
#pragma once

#include <memory>
#include <string>

#include "atraced/atrace_client.h"

namespace atraced_bench {

// Fails the run unless `rc` is 0, with the client's last message when there is one.
void Check(int rc, const std::string& what, atrace_client* c = nullptr);

atrace_client* OpenClient(const std::string& socket);

struct ClientCloser {
  void operator()(atrace_client* c) const { atrace_client_close(c); }
};
using ClientPtr = std::unique_ptr<atrace_client, ClientCloser>;

}  // namespace atraced_bench
