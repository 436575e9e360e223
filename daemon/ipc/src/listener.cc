#include "atraced/ipc/listener.h"

#include <string>

#include "atraced/ipc/peer_credentials.h"

namespace atraced {

Listener::Listener(asio::io_context& io, LocalAcceptor acceptor, TraceService& service, Logger& log,
                   ListenerOptions options)
    : acceptor_(std::move(acceptor)), service_(service), log_(log), options_(options), retry_timer_(io) {}

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
  // Floods come from one uid: one line per interval per uid (`log_it`), with a count, through
  // the service's throttle, which its refused requests share.
  auto shed = [&](bool log_it, uint64_t suppressed, const std::string& why) {
    if (log_it) {
      log_.Warning("shedding connection from pid ", peer->pid, " uid ", peer->uid, ": ", why, " (", suppressed,
                   " more for this uid since its last line)");
    }
    socket.close(ignored);
  };
  uint64_t suppressed = 0;
  UidShare::Verdict share;
  UidCharge connection = UidCharge::Take(options_.connections, peer->uid, 1, &share);
  if (share != UidShare::Verdict::kOk) {
    const bool log_it = service_.ShouldLogRefusal(peer->uid, &suppressed);
    shed(log_it, suppressed, options_.connections->Describe(share, peer->uid, 1) + " (max-clients)");
    return;
  }
  FdBudget::Verdict verdict;
  FdCharge charge = FdCharge::Take(options_.fd_budget, peer->uid, &verdict);
  if (verdict != FdBudget::Verdict::kOk) {
    const bool log_it = service_.ShouldLogRefusal(peer->uid, &suppressed);
    shed(log_it, suppressed, options_.fd_budget->Describe(verdict, peer->uid));
    return;
  }
  auto session = std::make_shared<Session>(std::move(socket), service_, log_, options_.idle_timeout,
                                           [this](Session* s) { sessions_.erase(s); });
  sessions_.emplace(session.get(), Held{session, std::move(connection), std::move(charge)});
  session->Start();
}

}  // namespace atraced
