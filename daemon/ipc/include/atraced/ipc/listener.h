// Accepts connections on an already-listening socket — adopted from systemd or bound by
// the daemon, the same code either way — and owns the sessions until shutdown.
#pragma once

#include <chrono>
#include <memory>
#include <unordered_map>

#include "atraced/core/log.h"
#include "atraced/ipc/asio.h"
#include "atraced/ipc/session.h"

namespace atraced {

struct ListenerOptions {
  size_t max_clients = 1024;
  std::chrono::seconds idle_timeout{60};
};

class Listener {
 public:
  Listener(asio::io_context& io, LocalAcceptor acceptor, TraceService& service, Logger& log, ListenerOptions options);

  void Start();
  // Stops accepting and asks every session to finish its batch and close.
  void Stop();
  size_t sessions() const { return sessions_.size(); }

 private:
  void DoAccept();

  LocalAcceptor acceptor_;
  TraceService& service_;
  Logger& log_;
  ListenerOptions options_;
  asio::steady_timer retry_timer_;
  bool stopped_ = false;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_;
};

}  // namespace atraced
