// Accepts connections on an already-listening socket — adopted from systemd or bound by
// the daemon, the same code either way — and owns the sessions until shutdown.
#pragma once

#include <chrono>
#include <memory>
#include <unordered_map>

#include "atraced/admission/fd_budget.h"
#include "atraced/admission/uid_share.h"
#include "atraced/common/log.h"
#include "atraced/ipc/asio.h"
#include "atraced/ipc/session.h"

namespace atraced {

struct ListenerOptions {
  // Connections served at once (max-clients) and what one uid may hold of them
  // (uid-connection-share), owned by the caller, who reports it in STATUS: a connection
  // over either is shed (accepted and closed at once). nullptr: no bound.
  UidShare* connections = nullptr;
  std::chrono::seconds idle_timeout{60};
  // Each connection costs its peer's uid one descriptor; a connection over the uid's share
  // or the budget is shed (accepted and closed at once). nullptr: no budget.
  FdBudget* fd_budget = nullptr;
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
  // Accepts `socket` as a session, or sheds it (logged once per interval per uid).
  void Admit(LocalSocket socket);

  LocalAcceptor acceptor_;
  TraceService& service_;
  Logger& log_;
  ListenerOptions options_;
  asio::steady_timer retry_timer_;
  bool stopped_ = false;
  struct Held {
    std::weak_ptr<Session> session;
    UidCharge connection;  // the connection itself, in its uid's share of max-clients
    FdCharge charge;       // the connection's descriptor
  };
  std::unordered_map<Session*, Held> sessions_;
};

}  // namespace atraced
