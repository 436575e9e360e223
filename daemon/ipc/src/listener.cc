#include "atraced/ipc/listener.h"

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
  if (sessions_.size() >= options_.max_clients) {
    log_.Warning("refusing connection from pid ", peer ? peer->pid : 0, ": max-clients ", options_.max_clients,
                 " reached");
    socket.close(ignored);
    return;
  }
  FdBudget::Verdict verdict;
  FdCharge charge = FdCharge::Take(peer ? options_.fd_budget : nullptr, peer ? peer->uid : 0, &verdict);
  if (verdict != FdBudget::Verdict::kOk) {
    // Shed cleanly: the client sees the connection closed at once, never a half-served one.
    uint64_t suppressed = 0;
    if (options_.fd_budget->ShouldLogRefusal(peer->uid, &suppressed)) {
      log_.Warning("shedding connection from pid ", peer->pid, " uid ", peer->uid, ": ",
                   options_.fd_budget->Describe(verdict, peer->uid), " (", suppressed,
                   " more for this uid since its last line)");
    }
    socket.close(ignored);
    return;
  }
  auto session = std::make_shared<Session>(std::move(socket), service_, log_, options_.idle_timeout,
                                           [this](Session* s) { sessions_.erase(s); });
  sessions_.emplace(session.get(), Held{session, std::move(charge)});
  session->Start();
}

}  // namespace atraced
