#include "atraced/ipc/listener.h"

#include <functional>
#include <string>

#include "atraced/ipc/peer_credentials.h"

namespace atraced {
namespace {
using RefusalLogger = std::function<bool(uint32_t uid, uint64_t* suppressed)>;
}  // namespace

Listener::Listener(asio::io_context& io, LocalAcceptor acceptor, TraceService& service, Logger& log,
                   ListenerOptions options)
    : acceptor_(std::move(acceptor)),
      service_(service),
      log_(log),
      options_(options),
      retry_timer_(io),
      own_connections_("connections", "connection", "uid-connection-share", options.max_clients,
                       options.uid_connection_share),
      connections_(options.connections != nullptr ? options.connections : &own_connections_) {}

void Listener::Start() { DoAccept(); }

void Listener::Stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  // Copy first: a session that closes at once removes itself from the map.
  std::vector<std::shared_ptr<Session>> live;
  for (auto& [raw, held] : sessions_) {
    if (auto s = held.session.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) s->Shutdown();
}

void Listener::DoAccept() {
  if (stopped_) return;
  acceptor_.async_accept([this](const boost::system::error_code& ec, LocalSocket socket) {
    if (stopped_) return;
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      // Out of descriptors (or another transient failure): say so, back off briefly and go on
      // accepting; a pending client is served once descriptors are free again.
      log_.Warning("accept failed: ", ec.message(), "; retrying in 100 ms");
      retry_timer_.expires_after(std::chrono::milliseconds(100));
      retry_timer_.async_wait([this](const boost::system::error_code& e) {
        if (!e) DoAccept();
      });
      return;
    }
    Admit(std::move(socket));
    DoAccept();
  });
}

void Listener::Admit(LocalSocket socket) {
  auto peer = ReadPeerCredentials(socket.native_handle());
  boost::system::error_code ignored;
  if (!peer) {
    // Without SO_PEERCRED there is no uid to charge, and nothing the daemon could serve.
    log_.Warning("shedding a connection whose credentials cannot be read");
    socket.close(ignored);
    return;
  }
  // Shed cleanly: the client sees the connection closed at once, never a half-served one.
  // Floods come from one uid: one line per interval per uid, with a count.
  auto shed = [&](RefusalLogger should_log, const std::string& why) {
    uint64_t suppressed = 0;
    if (should_log(peer->uid, &suppressed)) {
      log_.Warning("shedding connection from pid ", peer->pid, " uid ", peer->uid, ": ", why, " (", suppressed,
                   " more for this uid since its last line)");
    }
    socket.close(ignored);
  };
  UidShare::Verdict share;
  UidCharge connection = UidCharge::Take(connections_, peer->uid, 1, &share);
  if (share != UidShare::Verdict::kOk) {
    shed([this](uint32_t uid, uint64_t* n) { return connections_->ShouldLogRefusal(uid, n); },
         connections_->Describe(share, peer->uid, 1) + " (max-clients)");
    return;
  }
  FdBudget::Verdict verdict;
  FdCharge charge = FdCharge::Take(options_.fd_budget, peer->uid, &verdict);
  if (verdict != FdBudget::Verdict::kOk) {
    shed([this](uint32_t uid, uint64_t* n) { return options_.fd_budget->ShouldLogRefusal(uid, n); },
         options_.fd_budget->Describe(verdict, peer->uid));
    return;
  }
  auto session = std::make_shared<Session>(std::move(socket), service_, log_, options_.idle_timeout,
                                           [this](Session* s) { sessions_.erase(s); });
  sessions_.emplace(session.get(), Held{session, std::move(connection), std::move(charge)});
  session->Start();
}

}  // namespace atraced
