#include "client_test_util.h"

#include <catch2/catch.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "atraced/proto/codec.h"
#include "atraced/proto/wire.h"

namespace atrace_test {

atrace_client* OpenClient(const std::string& socket, int io_timeout_ms, unsigned max_in_flight) {
  atrace_client_options o;
  atrace_client_options_init(&o);
  o.socket_path = socket.c_str();
  o.io_timeout_ms = io_timeout_ms;
  o.max_in_flight = max_in_flight;
  atrace_client* c = nullptr;
  int rc = atrace_client_open(&o, &c);
  INFO(atrace_client_strerror(rc));
  REQUIRE(rc == 0);
  REQUIRE(c != nullptr);
  return c;
}

ScriptedDaemon::ScriptedDaemon(std::function<void(int fd)> handler) : socket_(tmp_ / "scripted.sock") {
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_.c_str(), socket_.size() + 1);
  REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listen_fd_, 4) == 0);
  thread_ = std::thread([this, handler] {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    handler(fd);
    ::close(fd);
  });
}

ScriptedDaemon::~ScriptedDaemon() {
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes a poll still waiting for a connection
  thread_.join();
  ::close(listen_fd_);
}

namespace {

bool ReadExact(int fd, uint8_t* buf, size_t n, int timeout_ms) {
  size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    ssize_t r = ::recv(fd, buf + got, n - got, 0);
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

bool ReadFrame(int fd, Frame* frame, int timeout_ms) {
  uint8_t h[ATR_FRAME_HEADER_SIZE];
  if (!ReadExact(fd, h, sizeof h, timeout_ms)) return false;
  uint32_t len = static_cast<uint32_t>(h[4] | h[5] << 8 | h[6] << 16 | static_cast<uint32_t>(h[7]) << 24);
  frame->opcode = static_cast<uint16_t>(h[8] | h[9] << 8);
  frame->request_id = static_cast<uint32_t>(h[12] | h[13] << 8 | h[14] << 16 | static_cast<uint32_t>(h[15]) << 24);
  frame->payload.assign(len, 0);
  return len == 0 || ReadExact(fd, frame->payload.data(), len, timeout_ms);
}

void ReplyOk(int fd, const Frame& request, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> payload;
  atraced::proto::EncodeReplyOk(payload);
  payload.insert(payload.end(), body.begin(), body.end());
  std::vector<uint8_t> frame;
  atraced::proto::AppendFrame(frame, request.opcode, ATR_FLAG_REPLY, request.request_id, payload);
  (void)::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
}

bool ServeHello(int fd) {
  Frame f;
  if (!ReadFrame(fd, &f) || f.opcode != ATR_OP_HELLO) return false;
  atraced::proto::HelloReply h;
  h.major = 1;
  h.max_payload = ATR_MAX_PAYLOAD;
  std::vector<uint8_t> body;
  atraced::proto::Encode(h, body);
  ReplyOk(fd, f, body);
  return true;
}

}  // namespace atrace_test
