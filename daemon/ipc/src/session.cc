#include "atraced/ipc/session.h"

#include <sys/socket.h>

#include <cstring>

#include "atraced/ipc/peer_credentials.h"

namespace atraced {

Session::Session(LocalSocket socket, ServiceHandle service, Logger& log, std::chrono::seconds idle_timeout,
                 std::function<void(Session*)> on_close)
    : socket_(std::move(socket)),
      service_(service),
      log_(log),
      idle_timeout_(idle_timeout),
      on_close_(std::move(on_close)),
      idle_timer_(socket_.get_executor()) {}

Session::~Session() = default;

void Session::Start() {
  auto peer = ReadPeerCredentials(socket_.native_handle());
  if (!peer) {
    log_.Warning("closing a connection whose peer credentials cannot be read: ", std::strerror(errno));
    Close("no peer credentials");
    return;
  }
  peer_ = *peer;
  busy_ = true;
  ArmIdleTimer();
  auto self = shared_from_this();
  asio::post(service_.executor, [self] {
    self->client_id_ = self->service_.service->Connect(self->peer_);
    asio::post(self->socket_.get_executor(), [self] {
      self->connected_to_service_ = true;
      self->busy_ = false;
      if (self->closing_) {  // closed while connecting: the service must still forget us
        auto svc = self->service_.service;
        auto id = self->client_id_;
        asio::post(self->service_.executor, [svc, id] { svc->Disconnect(id); });
        return;
      }
      if (self->shutdown_requested_) return self->Close("daemon stopping");
      self->DoRead();
    });
  });
}

void Session::Shutdown() {
  shutdown_requested_ = true;
  if (!busy_) Close("daemon stopping");
}

void Session::ArmIdleTimer() {
  idle_timer_.expires_after(idle_timeout_);
  std::weak_ptr<Session> weak = weak_from_this();
  idle_timer_.async_wait([weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closing_) return;
    if (self->busy_) return self->ArmIdleTimer();  // working for the client is not idleness
    self->log_.Info("dropping idle connection of pid ", self->peer_.pid, " after ", self->idle_timeout_.count(), " s");
    self->Close("idle timeout");
  });
}

void Session::DoRead() {
  if (closing_ || shutdown_requested_) return;
  auto space = decoder_.WritableSpace();
  auto self = shared_from_this();
  socket_.async_read_some(asio::buffer(space.data(), space.size()),
                          [self](const boost::system::error_code& ec, size_t n) { self->OnRead(ec, n); });
}

void Session::OnRead(const boost::system::error_code& ec, size_t n) {
  if (closing_) return;
  if (ec) {
    if (ec != asio::error::eof && ec != asio::error::connection_reset && ec != asio::error::operation_aborted) {
      log_.Info("read from pid ", peer_.pid, " failed: ", ec.message());
    }
    Close("disconnected");
    return;
  }
  decoder_.Commit(n);
  ArmIdleTimer();
  busy_ = true;
  auto self = shared_from_this();
  asio::post(service_.executor, [self] { self->ProcessOnStorage(); });
}

void Session::ProcessOnStorage() {
  proto::FrameHeader header;
  std::span<const uint8_t> payload;
  while (!replies_.close_after) {
    auto r = decoder_.Next(&header, &payload);
    if (r == proto::FrameDecoder::Result::kNeedMore) break;
    if (r == proto::FrameDecoder::Result::kError) {
      violation_ = decoder_.error();
      break;
    }
    service_.service->Handle(client_id_, header, payload, replies_);
  }
  auto self = shared_from_this();
  asio::post(socket_.get_executor(), [self] { self->WriteReplies(); });
}

void Session::WriteReplies() {
  write_offset_ = 0;
  next_fd_ = 0;
  WriteNext();
}

void Session::WriteNext() {
  while (!closing_ && write_offset_ < replies_.bytes.size()) {
    // Send up to the next frame that carries a descriptor; that frame goes with the
    // descriptor attached to its first byte, so the client receives both together.
    size_t end = replies_.bytes.size();
    bool attach = false;
    if (next_fd_ < replies_.fds.size()) {
      if (replies_.fds[next_fd_].offset == write_offset_) {
        attach = true;
        if (next_fd_ + 1 < replies_.fds.size()) end = replies_.fds[next_fd_ + 1].offset;
      } else {
        end = replies_.fds[next_fd_].offset;
      }
    }
    iovec iov{replies_.bytes.data() + write_offset_, end - write_offset_};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (attach) {
      std::memset(control, 0, sizeof control);
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      cmsghdr* cm = CMSG_FIRSTHDR(&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(sizeof(int));
      int fd = replies_.fds[next_fd_].fd.get();
      std::memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    ssize_t n = ::sendmsg(socket_.native_handle(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      write_offset_ += static_cast<size_t>(n);
      if (attach) replies_.fds[next_fd_++].fd.reset();  // the client has its copy now
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto self = shared_from_this();
      socket_.async_wait(asio::socket_base::wait_write, [self](const boost::system::error_code& ec) {
        if (ec) return self->Close("write wait failed");
        self->WriteNext();
      });
      return;
    }
    if (n < 0 && errno != EPIPE && errno != ECONNRESET) {
      log_.Info("write to pid ", peer_.pid, " failed: ", std::strerror(errno));
    }
    Close("write failed");
    return;
  }
  if (closing_) return;
  // The batch is done.
  bool close_after = replies_.close_after;
  replies_ = ReplyBatch();
  busy_ = false;
  if (!violation_.empty()) {
    log_.Warning("closing connection of pid ", peer_.pid, " uid ", peer_.uid, ": protocol violation: ", violation_);
    Close("protocol violation");
    return;
  }
  if (close_after) return Close("refused version");
  if (shutdown_requested_) return Close("daemon stopping");
  DoRead();
}

void Session::Close(const char* why) {
  if (closing_) return;
  closing_ = true;
  log_.Debug("closing connection of pid ", peer_.pid, ": ", why);
  idle_timer_.cancel();
  boost::system::error_code ignored;
  socket_.close(ignored);
  if (connected_to_service_) {
    auto svc = service_.service;
    auto id = client_id_;
    asio::post(service_.executor, [svc, id] { svc->Disconnect(id); });
  }
  if (on_close_) on_close_(this);
}

}  // namespace atraced
