#include "support/raw_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

#include "atraced/base/send_fd.h"

namespace atraced::testing {

std::optional<RawClient> RawClient::Connect(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return std::nullopt;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return std::nullopt;
  return RawClient(std::move(fd));
}

bool RawClient::SendRaw(const std::vector<uint8_t>& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_.get(), bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

void RawClient::Queue(uint16_t opcode, const std::vector<uint8_t>& payload) {
  proto::AppendFrame(pending_, opcode, 0, next_id_++, payload);
}

bool RawClient::Flush() {
  bool ok = SendRaw(pending_);
  pending_.clear();
  return ok;
}

bool RawClient::ReadMore(std::chrono::milliseconds timeout) {
  pollfd p{fd_.get(), POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (r <= 0) return false;
  auto space = decoder_->WritableSpace();
  std::vector<UniqueFd> got;
  ssize_t n = RecvWithFds(fd_.get(), space.data(), space.size(), 0, 8, &got, nullptr);
  if (n <= 0) return false;
  for (UniqueFd& fd : got) fds_.push_back(std::move(fd));
  decoder_->Commit(static_cast<size_t>(n));
  return true;
}

std::optional<RawReply> RawClient::Read(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    proto::FrameHeader h;
    std::span<const uint8_t> payload;
    auto r = decoder_->Next(&h, &payload);
    if (r == proto::FrameDecoder::Result::kError) return std::nullopt;
    if (r == proto::FrameDecoder::Result::kFrame) {
      proto::ReplyHead head;
      if (!proto::DecodeReply(payload, &head).ok()) return std::nullopt;
      RawReply out{h, head.status, head.message, std::vector<uint8_t>(head.body.begin(), head.body.end())};
      return out;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !ReadMore(left)) return std::nullopt;
  }
}

std::optional<RawReply> RawClient::Call(uint16_t opcode, const std::vector<uint8_t>& payload) {
  if (!Send(opcode, payload)) return std::nullopt;
  return Read();
}

std::optional<RawReply> RawClient::CallWithFd(uint16_t opcode, const std::vector<uint8_t>& payload, int fd) {
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, opcode, 0, next_id_++, payload);
  if (SendWithFd(fd_.get(), frame.data(), frame.size(), fd, MSG_NOSIGNAL) != static_cast<ssize_t>(frame.size())) {
    return std::nullopt;
  }
  return Read();
}

bool RawClient::Hello(uint64_t features, uint64_t* granted) {
  proto::Hello h;
  h.features = features;
  auto r = Call(ATR_OP_HELLO, Payload(h));
  if (!r || r->status != 0) return false;
  if (granted != nullptr) {
    proto::HelloReply reply;
    if (!proto::Decode(r->body, &reply).ok()) return false;
    *granted = reply.features;
  }
  return true;
}

bool RawClient::SeesHangUp(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    pollfd p{fd_.get(), POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[4096];
    ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

std::string RawClient::Emit(uint8_t kind, const std::string& object, const std::string& content, std::string* error,
                            uint8_t side, uint32_t device_id, int32_t host_pid) {
  uint32_t eid = next_object_id_++;
  uint32_t fid = next_object_id_++;
  proto::EventBegin b = BeginRequest(eid, kind);
  b.side = side;
  b.device_id = device_id;
  b.host_pid = host_pid;
  proto::FileOpen o = ObjectFileRequest(eid, fid, object);
  proto::FileAppend a;
  a.file_id = fid;
  a.data = {reinterpret_cast<const uint8_t*>(content.data()), content.size()};
  Queue(ATR_OP_EVENT_BEGIN, Payload(b));
  Queue(ATR_OP_FILE_OPEN, Payload(o));
  Queue(ATR_OP_FILE_APPEND, Payload(a));
  Queue(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{fid}));
  Queue(ATR_OP_EVENT_END, Payload(proto::IdRequest{eid}));
  if (!Flush()) {
    if (error) *error = "send failed";
    return "";
  }
  std::string path;
  for (int i = 0; i < 5; ++i) {
    auto r = Read();
    if (!r) {
      if (error) *error = "no reply";
      return "";
    }
    if (r->status != 0) {
      if (error && error->empty()) *error = std::string(proto::StatusName(r->status)) + " " + r->message;
      continue;
    }
    if (r->header.opcode == ATR_OP_FILE_OPEN) {
      proto::PathReply p;
      if (proto::Decode(r->body, &p).ok()) path = p.path;
    }
  }
  return path;
}

std::string WriteEvent(RawClient& c, uint32_t event_id, uint8_t kind, std::vector<EventFile> files) {
  auto ok = [](const std::optional<RawReply>& r) { return r && r->status == 0; };
  if (!ok(c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(event_id, kind))))) return "begin refused";
  uint32_t file_id = event_id * 100;
  for (auto& f : files) {
    f.open.event_id = event_id;
    f.open.file_id = ++file_id;
    if (!ok(c.Call(ATR_OP_FILE_OPEN, Payload(f.open)))) return "open refused";
    for (size_t at = 0; at < f.content.size(); at += 256 * 1024) {
      proto::FileAppend a;
      a.file_id = file_id;
      const std::string piece = f.content.substr(at, 256 * 1024);
      a.data = {reinterpret_cast<const uint8_t*>(piece.data()), piece.size()};
      auto r = c.Call(ATR_OP_FILE_APPEND, Payload(a));
      if (!ok(r)) return "append refused: " + (r ? r->message : std::string("no reply"));
    }
    if (!ok(c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{file_id})))) return "close refused";
  }
  if (!ok(c.Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{event_id})))) return "end refused";
  return "";
}

proto::FileOpen StackcoreFileRequest(const std::string& program, int32_t signo) {
  proto::FileOpen o;
  o.form = ATR_FILE_STACKCORE;
  o.signo = signo;
  o.tid = 1;
  o.name = program;
  return o;
}

}  // namespace atraced::testing
