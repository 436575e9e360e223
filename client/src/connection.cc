#include "connection.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "atraced/base/send_fd.h"
#include "endpoint.h"

namespace atrace_client_internal {

namespace proto = atraced::proto;

Connection::Connection(Fd fd)
    : fd_(std::move(fd)), owner_pid_(::getpid()), decoder_(std::make_unique<proto::FrameDecoder>()) {}

int Connection::Open(const std::string& path, uint64_t features, const proto::LabelsRequest& labels, const Deadline& deadline,
                     std::unique_ptr<Connection>* out, std::string* message) {
  Fd fd;
  int rc = ConnectUnix(path, deadline, &fd);
  if (rc != 0) return rc;
  std::unique_ptr<Connection> c(new Connection(std::move(fd)));
  proto::Hello hello;
  hello.features = features;
  std::vector<uint8_t> payload;
  proto::Encode(hello, payload);
  c->Queue(ATR_OP_HELLO, payload, 0);
  rc = c->Pump(deadline, 0);
  if (rc != 0) return rc;
  Reply r = std::move(c->inbox_.front());
  c->inbox_.pop_front();
  if (r.status != 0) {
    *message = r.message;
    return r.status;
  }
  if (!proto::Decode(r.body, &c->hello_).ok() || c->hello_.major != ATR_VERSION_MAJOR) return -EPROTO;
  if ((c->hello_.features & ATR_FEATURE_LABELS) && !(labels.labels.empty() && labels.hang_timeout.empty())) {
    // Labels are the process's word, not a condition of tracing: refused, they are said
    // once on stderr (the daemon logs it too) and the connection goes on without them.
    // The hang timeout only to a daemon that knows it (an older one refuses the bytes).
    proto::LabelsRequest sent = labels;
    if (!(c->hello_.features & ATR_FEATURE_HANG_TIMEOUT)) sent.hang_timeout.clear();
    payload.clear();
    proto::Encode(sent, payload);
    c->Queue(ATR_OP_LABELS, payload, 0);
    rc = c->Pump(deadline, 0);
    if (rc != 0) return rc;
    Reply lr = std::move(c->inbox_.front());
    c->inbox_.pop_front();
    static std::atomic<bool> told{false};
    if (lr.status != 0 && !told.exchange(true)) {
      std::string line = "libatrace_client: atraced refused this process's job/rank labels: " + lr.message + "\n";
      (void)!::write(STDERR_FILENO, line.data(), line.size());
    }
  }
  *out = std::move(c);
  return 0;
}

void Connection::Queue(uint16_t opcode, const std::vector<uint8_t>& payload, uint64_t tag) {
  uint32_t id = next_request_id_++;
  proto::AppendFrame(out_, opcode, 0, id, payload);
  expected_.push_back(Expected{opcode, id, tag});
}

void Connection::QueueAppend(const proto::FileAppend& m, uint64_t tag) {
  uint32_t id = next_request_id_++;
  proto::AppendFrame(out_, id, m);
  expected_.push_back(Expected{ATR_OP_FILE_APPEND, id, tag});
}

int Connection::SendSome() {
  while (sent_ < out_.size()) {
    // MSG_NOSIGNAL: a daemon that hung up gives EPIPE here, never SIGPIPE to the application.
    ssize_t n = ::send(fd_.get(), out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      return (errno == EPIPE || errno == ECONNRESET) ? -ECONNRESET : -errno;
    }
    sent_ += static_cast<size_t>(n);
  }
  out_.clear();
  sent_ = 0;
  return 0;
}

int Connection::ReceiveSome() {
  auto space = decoder_->WritableSpace();
  // Room for several descriptors: the daemon sends one per FILE_GET_FD reply, and one read
  // may cover several reply frames. Always recvmsg: a plain read would drop them.
  std::vector<atraced::UniqueFd> got;
  bool truncated = false;
  ssize_t n;
  do {
    n = atraced::RecvWithFds(fd_.get(), space.data(), space.size(), MSG_DONTWAIT, 16, &got, &truncated);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return errno == ECONNRESET ? -ECONNRESET : -errno;
  }
  for (atraced::UniqueFd& fd : got) fds_.push_back(std::move(fd));
  if (truncated) return -EPROTO;  // a descriptor was lost: out of sync
  if (n == 0) return -ECONNRESET;
  decoder_->Commit(static_cast<size_t>(n));
  return DecodeFrames();
}

int Connection::DecodeFrames() {
  for (;;) {
    proto::FrameHeader h;
    std::span<const uint8_t> payload;
    auto r = decoder_->Next(&h, &payload);
    if (r == proto::FrameDecoder::Result::kNeedMore) return 0;
    if (r == proto::FrameDecoder::Result::kError) return -EPROTO;
    if (expected_.empty()) return -EPROTO;  // a reply nobody asked for
    Expected want = expected_.front();
    if (h.flags != ATR_FLAG_REPLY || h.opcode != want.opcode || h.request_id != want.request_id) {
      return -EPROTO;
    }
    proto::ReplyHead head;
    if (!proto::DecodeReply(payload, &head).ok() || head.status > 0) return -EPROTO;
    expected_.pop_front();
    Reply reply;
    reply.opcode = h.opcode;
    reply.tag = want.tag;
    reply.status = head.status;
    reply.message = std::move(head.message);
    reply.body.assign(head.body.begin(), head.body.end());
    if (h.opcode == ATR_OP_FILE_GET_FD && head.status == 0) {
      // The descriptor arrives no later than the last byte of its frame, in reply order.
      if (fds_.empty()) return -EPROTO;
      reply.fd = std::move(fds_.front());
      fds_.pop_front();
    }
    inbox_.push_back(std::move(reply));
  }
}

int Connection::Pump(const Deadline& deadline, size_t max_outstanding, bool wait) {
  if (!wait) {
    // One pass that never blocks: send what the socket takes, take what has arrived.
    for (int pass = 0; pass < 2; ++pass) {
      int rc = SendSome();
      if (rc != 0) return rc;
      for (;;) {
        pollfd p{fd_.get(), POLLIN, 0};
        int r = ::poll(&p, 1, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        rc = ReceiveSome();
        if (rc != 0) return rc;
      }
    }
    return 0;
  }
  for (;;) {
    if (has_unsent()) {
      int rc = SendSome();
      if (rc != 0) return rc;
    }
    if (!has_unsent() && expected_.size() <= max_outstanding) return 0;
    // Wait for replies and room to write at once: a daemon that stops reading until we
    // read its replies must not deadlock us.
    pollfd p{fd_.get(), static_cast<short>(POLLIN | (has_unsent() ? POLLOUT : 0)), 0};
    int r = ::poll(&p, 1, deadline.RemainingMs());
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) return -ETIMEDOUT;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      // Read first even on POLLHUP: replies sent before the hang-up are still queued.
      int rc = ReceiveSome();
      if (rc != 0) return rc;
    }
  }
}

bool Connection::LooksDead() {
  pollfd p{fd_.get(), POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char byte;
  ssize_t n = ::recv(fd_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  return true;  // EOF, an error, or bytes nobody asked for
}

}  // namespace atrace_client_internal
