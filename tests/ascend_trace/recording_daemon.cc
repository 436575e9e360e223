#include "recording_daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "atraced/base/send_fd.h"
#include "atraced/proto/frame_decoder.h"
#include "atraced/proto/ring_reader.h"

namespace ascend_trace_test {

namespace proto = atraced::proto;

RecordingDaemon::RecordingDaemon(std::string path, bool grant_memfd) : path_(std::move(path)), grant_memfd_(grant_memfd) {
  ::unlink(path_.c_str());
  listener_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener_.get(), 8) != 0) {
    throw std::runtime_error("recording daemon: cannot listen on " + path_);
  }
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  wake_[0].reset(p[0]);
  wake_[1].reset(p[1]);
  thread_ = std::thread([this] { Serve(); });
}

RecordingDaemon::~RecordingDaemon() {
  (void)!::write(wake_[1].get(), "x", 1);
  thread_.join();
  ::unlink(path_.c_str());
}

void RecordingDaemon::Serve() {
  for (;;) {
    pollfd p[2] = {{listener_.get(), POLLIN, 0}, {wake_[0].get(), POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) continue;
    if (p[1].revents) return;
    atraced::UniqueFd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c.valid()) continue;
    {
      std::lock_guard lock(mu_);
      ++connections_;
    }
    ServeConnection(c.get());
  }
}

void RecordingDaemon::ServeConnection(int fd) {
  proto::FrameDecoder decoder;
  std::vector<int> fds;  // received with the bytes not yet framed
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_[0].get(), POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) continue;
    if (p[1].revents) return;
    auto space = decoder.WritableSpace(4096);
    std::vector<atraced::UniqueFd> got;
    const ssize_t n = atraced::RecvWithFds(fd, space.data(), space.size(), 0, 8, &got, nullptr);
    if (n <= 0) return;  // the client hung up
    for (atraced::UniqueFd& g : got) fds.push_back(g.release());
    decoder.Commit(static_cast<size_t>(n));
    proto::FrameHeader h;
    std::span<const uint8_t> payload;
    while (decoder.Next(&h, &payload) == proto::FrameDecoder::Result::kFrame) {
      std::vector<uint8_t> reply;
      proto::EncodeReplyOk(reply);
      std::lock_guard lock(mu_);
      opcodes_.push_back(h.opcode);
      if (h.opcode == ATR_OP_HELLO) {
        proto::HelloReply r{ATR_VERSION_MAJOR, static_cast<uint16_t>(grant_memfd_ ? 1 : 0), ATR_MAX_PAYLOAD,
                            grant_memfd_ ? ATR_FEATURE_MEMFD : 0, 0, 0, static_cast<uint32_t>(::getpid())};
        proto::Encode(r, reply);
      } else if (h.opcode == ATR_OP_RING_REGISTER) {
        auto reg = std::make_unique<Registered>();
        if (!proto::Decode(payload, &reg->msg).ok()) {
          reply.clear();
          proto::EncodeReplyError(atraced::Status::Error(EBADMSG, "bad RING_REGISTER"), reply);
        }
        reg->fds_attached = fds.size();
        if (!fds.empty()) reg->memfd.reset(fds.front());
        for (size_t i = 1; i < fds.size(); ++i) ::close(fds[i]);
        fds.clear();
        rings_.push_back(std::move(reg));
      } else if (h.opcode == ATR_OP_RING_REPORT) {
        proto::RingReport r;
        if (proto::Decode(payload, &r).ok()) reports_.push_back(r);
      } else if (h.opcode == ATR_OP_RING_RELEASE) {
        proto::IdRequest r;
        if (proto::Decode(payload, &r).ok()) released_.push_back(r.id);
      }
      std::vector<uint8_t> frame;
      proto::AppendFrame(frame, h.opcode, ATR_FLAG_REPLY, h.request_id, reply);
      (void)!::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
      cv_.notify_all();
    }
  }
}

std::vector<uint16_t> RecordingDaemon::Opcodes() {
  std::lock_guard lock(mu_);
  return opcodes_;
}
std::vector<proto::RingReport> RecordingDaemon::Reports() {
  std::lock_guard lock(mu_);
  return reports_;
}
std::vector<uint32_t> RecordingDaemon::Released() {
  std::lock_guard lock(mu_);
  return released_;
}
int RecordingDaemon::Connections() {
  std::lock_guard lock(mu_);
  return connections_;
}

const Registered* RecordingDaemon::Find(uint32_t object_id) {
  std::lock_guard lock(mu_);
  for (auto it = rings_.rbegin(); it != rings_.rend(); ++it) {
    if ((*it)->msg.object_id == object_id) return it->get();
  }
  return nullptr;
}

std::vector<uint8_t> RecordingDaemon::SnapshotRing(uint32_t object_id) {
  const Registered* r = Find(object_id);
  std::vector<uint8_t> out;
  if (r == nullptr || !r->memfd.valid()) return out;
  // As the daemon must: map read-only, copy in slot order.
  void* p = ::mmap(nullptr, r->msg.ring_bytes, PROT_READ, MAP_SHARED, r->memfd.get(), 0);
  if (p == MAP_FAILED) return out;
  proto::CopyRingSnapshot(p, r->msg.ring_bytes, &out);
  ::munmap(p, r->msg.ring_bytes);
  return out;
}

bool RecordingDaemon::WaitFor(uint16_t opcode, size_t n) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::seconds(5), [&] {
    return static_cast<size_t>(std::count(opcodes_.begin(), opcodes_.end(), opcode)) >= n;
  });
}

}  // namespace ascend_trace_test
