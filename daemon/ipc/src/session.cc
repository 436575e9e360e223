#include "atraced/ipc/session.h"

#include <sys/socket.h>

#include <cstring>

#include "atraced/base/send_fd.h"
#include "atraced/ipc/peer_credentials.h"
#include "atraced/processes/process_identity.h"
#include "atraced/proto/wire.h"

namespace atraced {

Session::Session(LocalSocket socket, TraceService& service, Logger& log, std::chrono::seconds idle_timeout,
                 std::function<void(Session*)> on_close)
    : socket_(std::move(socket)),
      service_(service),
      log_(log),
      idle_timeout_(idle_timeout),
      on_close_(std::move(on_close)),
      deadline_(socket_.get_executor()) {}

Session::~Session() = default;

void Session::Start() {
  auto peer = ReadPeerCredentials(socket_.native_handle());
  if (!peer) {
    log_.Warning("closing a connection whose peer credentials cannot be read: ", std::strerror(errno));
    Close("no peer credentials");
    return;
  }
  peer_ = *peer;
  // Taken now, before the peer can exit and its pid be reused: the process itself.
  client_id_ = service_.Connect(peer_, PeerPidfd(socket_.native_handle(), peer_.pid));
  connected_to_service_ = true;
  std::weak_ptr<Session> weak = weak_from_this();
  service_.SetReplySink(client_id_, [weak](ReplyBatch&& batch) {
    if (auto self = weak.lock()) self->OnLateReply(std::move(batch));
  });
  Progress();
  ArmDeadline(idle_timeout_);
  DoRead();
}

void Session::Shutdown() {
  shutdown_requested_ = true;
  // Waiting for a request: nothing can be sent before the stop. Waiting for a late reply
  // (a save on the I/O workers, which the daemon lets land within its grace period): it is
  // sent first, and the turn's end closes (AfterTurn), as it does for a turn under way.
  if (reading_) Close("daemon stopping");
}

// The timer is armed once and re-armed only when it fires: progress just moves
// last_progress_, which costs no system call, instead of resetting a kernel timer per request.
void Session::ArmDeadline(std::chrono::steady_clock::duration in) {
  deadline_.expires_after(in);
  std::weak_ptr<Session> weak = weak_from_this();
  deadline_.async_wait([weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->closing_) return;
    self->OnDeadline();
  });
}

void Session::OnDeadline() {
  const auto due = last_progress_ + idle_timeout_;
  const auto now = std::chrono::steady_clock::now();
  if (now < due) return ArmDeadline(due - now);
  // A CRASH being inspected off the loop: the inspection is bounded by its budget.
  if (awaiting_reply_) return ArmDeadline(idle_timeout_);
  if (!reading_) {
    log_.Notice("dropping connection of pid ", peer_.pid, " uid ", peer_.uid, ": it did not read its replies within ",
                idle_timeout_.count(), " s");
    Close("replies not read");
  } else if (decoder_.buffered() > 0) {
    log_.Notice("dropping connection of pid ", peer_.pid, " uid ", peer_.uid, ": a request was not completed within ",
                idle_timeout_.count(), " s");
    Close("request deadline");
  } else if (service_.KeepWhileIdle(client_id_)) {
    // A libascend_trace process: its records go into the rings with no request, and this
    // connection closing is how the daemon learns that it died (trace_service.h). Its
    // CRASH connection is silent until the process catches a fatal signal.
    ArmDeadline(idle_timeout_);
  } else {
    log_.Info("dropping idle connection of pid ", peer_.pid, " after ", idle_timeout_.count(), " s");
    Close("idle timeout");
  }
}

void Session::DoRead() {
  if (closing_) return;
  if (shutdown_requested_) return Close("daemon stopping");
  reading_ = true;
  auto self = shared_from_this();
  if (service_.features(client_id_) & ATR_FEATURE_MEMFD) {
    socket_.async_wait(asio::socket_base::wait_read,
                       [self](const boost::system::error_code& ec) { self->OnReadable(ec); });
    return;
  }
  auto space = decoder_.WritableSpace();
  socket_.async_read_some(asio::buffer(space.data(), space.size()),
                          [self](const boost::system::error_code& ec, size_t n) { self->OnRead(ec, n); });
}

void Session::OnRead(const boost::system::error_code& ec, size_t n) {
  reading_ = false;
  if (closing_) return;
  if (ec) {
    if (ec != asio::error::eof && ec != asio::error::connection_reset && ec != asio::error::operation_aborted) {
      log_.Info("read from pid ", peer_.pid, " failed: ", ec.message());
    }
    Close("disconnected");
    return;
  }
  received_ += n;
  decoder_.Commit(n);
  Turn();
}

// recvmsg rather than Asio's read: a 1.1 client attaches memfds, which a plain read would
// silently close.
void Session::OnReadable(const boost::system::error_code& ec) {
  reading_ = false;
  if (closing_) return;
  if (ec) {
    if (ec != asio::error::operation_aborted) log_.Info("wait for pid ", peer_.pid, " failed: ", ec.message());
    Close("disconnected");
    return;
  }
  auto space = decoder_.WritableSpace();
  std::vector<UniqueFd> got;  // owned at once, so none leaks whatever happens next
  bool truncated = false;
  ssize_t n = RecvWithFds(socket_.native_handle(), space.data(), space.size(), MSG_DONTWAIT, kMaxPendingFds, &got,
                          &truncated);
  if (n < 0) {
    int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return DoRead();
    if (err != ECONNRESET) log_.Info("read from pid ", peer_.pid, " failed: ", std::strerror(err));
    Close("disconnected");
    return;
  }
  if (n == 0) {
    Close("disconnected");
    return;
  }
  for (UniqueFd& fd : got) fds_in_.push_back({received_, std::move(fd)});
  if (truncated || fds_in_.size() > kMaxPendingFds) {
    violation_ = "more than " + std::to_string(kMaxPendingFds) + " descriptors sent ahead of their frames";
    fds_in_.clear();
    Turn();  // replies to what came before, then closes
    return;
  }
  received_ += static_cast<uint64_t>(n);
  decoder_.Commit(static_cast<size_t>(n));
  Turn();
}

void Session::Turn() {
  if (closing_) return;
  proto::FrameHeader header;
  std::span<const uint8_t> payload;
  size_t handled = 0;
  more_ = false;
  while (!replies_.close_after && violation_.empty()) {
    if (handled == kRequestsPerTurn) {
      more_ = true;
      break;
    }
    auto r = decoder_.Next(&header, &payload);
    if (r == proto::FrameDecoder::Result::kNeedMore) break;
    if (r == proto::FrameDecoder::Result::kError) {
      violation_ = decoder_.error();
      break;
    }
    const uint64_t start = consumed_;
    consumed_ += ATR_FRAME_HEADER_SIZE + header.length;
    UniqueFd attached;
    if (!fds_in_.empty() && fds_in_.front().offset < start) {
      violation_ = "a descriptor arrived in the middle of a frame";
      break;
    }
    if (!fds_in_.empty() && fds_in_.front().offset == start) {
      attached = std::move(fds_in_.front().fd);
      fds_in_.pop_front();
      if (!fds_in_.empty() && fds_in_.front().offset == start) {
        violation_ = "more than one descriptor with one frame";
        break;
      }
    }
    const TraceService::Reply where = service_.Handle(client_id_, header, payload, replies_, std::move(attached));
    ++handled;
    if (where == TraceService::Reply::kLater) {
      // Its reply comes later (OnLateReply); later requests wait for it, in order.
      awaiting_reply_ = true;
      // No read or write is outstanding while parked, and those are what keep a session
      // alive: hold it until the reply comes or the session closes.
      parked_self_ = shared_from_this();
      more_ = true;
      break;
    }
  }
  if (handled > 0) Progress();
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
    ssize_t n = SendWithFd(socket_.native_handle(), replies_.bytes.data() + write_offset_, end - write_offset_,
                           attach ? replies_.fds[next_fd_].fd.get() : -1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      write_offset_ += static_cast<size_t>(n);
      if (attach) replies_.fds[next_fd_++].fd.reset();  // the client has its copy now
      continue;
    }
    int err = n < 0 ? errno : EIO;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      // The client is not reading. The deadline keeps running: a write that never drains
      // ends the session at idle_timeout.
      auto self = shared_from_this();
      socket_.async_wait(asio::socket_base::wait_write, [self](const boost::system::error_code& ec) {
        if (self->closing_) return;
        if (ec) return self->Close("write wait failed");
        self->WriteNext();
      });
      return;
    }
    if (err != EPIPE && err != ECONNRESET) log_.Info("write to pid ", peer_.pid, " failed: ", std::strerror(err));
    Close("write failed");
    return;
  }
  if (closing_) return;
  if (!replies_.bytes.empty()) Progress();
  AfterTurn();
}

void Session::AfterTurn() {
  const bool close_after = replies_.close_after;
  // Keep the buffer's capacity for the next turn: no allocation per request in steady state.
  replies_.bytes.clear();
  replies_.fds.clear();
  replies_.close_after = false;
  if (!violation_.empty()) {
    log_.Warning("closing connection of pid ", peer_.pid, " uid ", peer_.uid, ": protocol violation: ", violation_);
    Close("protocol violation");
    return;
  }
  if (close_after) return Close("refused version");
  if (shutdown_requested_) return Close("daemon stopping");
  if (awaiting_reply_) return;  // OnLateReply resumes the session
  if (more_) {
    // Yield: every other ready session runs before this one's next turn.
    auto self = shared_from_this();
    asio::post(socket_.get_executor(), [self] { self->Turn(); });
    return;
  }
  DoRead();
}

void Session::OnLateReply(ReplyBatch&& batch) {
  auto self = std::move(parked_self_);  // alive to the end of this call, then by its I/O
  if (closing_ || !awaiting_reply_) return;
  awaiting_reply_ = false;
  Progress();
  if (write_offset_ < replies_.bytes.size()) {
    // The replies before it are still going out (the client reads slowly): it follows them.
    const size_t base = replies_.bytes.size();
    replies_.bytes.insert(replies_.bytes.end(), batch.bytes.begin(), batch.bytes.end());
    for (auto& fd : batch.fds) {
      fd.offset += base;
      replies_.fds.push_back(std::move(fd));
    }
    return;
  }
  replies_ = std::move(batch);
  write_offset_ = 0;
  next_fd_ = 0;
  WriteNext();
}

void Session::Close(const char* why) {
  if (closing_) return;
  closing_ = true;
  log_.Debug("closing connection of pid ", peer_.pid, ": ", why);
  deadline_.cancel();
  boost::system::error_code ignored;
  socket_.close(ignored);
  if (connected_to_service_) service_.Disconnect(client_id_);
  if (on_close_) on_close_(this);
  // A parked session lets go of itself, after this call returns.
  if (parked_self_) asio::post(socket_.get_executor(), [self = std::move(parked_self_)] {});
}

}  // namespace atraced
