// Clients that stall a session, against the real binary (issue 14, defects 2 and 3): one
// that pipelines thousands of FILE_GET_FD and never reads its replies, and one that trickles
// a request in a byte at a time. Each is dropped at the idle timeout and everything it held
// is released.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>

#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

// Waits for the daemon to close `fd` without reading from it (reading would be progress):
// poll reports POLLHUP once the peer is gone.
bool HungUpUnread(int fd, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, 0, 0};
    if (::poll(&p, 1, 50) > 0 && (p.revents & (POLLHUP | POLLERR))) return true;
  }
  return false;
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("4000 pipelined FILE_GET_FD never read: dropped at the idle timeout, descriptors back to baseline",
          "[hardening][stall]") {
  DaemonProcess d({{"--idle-timeout", "3"}, {}, true, 10});
  REQUIRE(d.Start());
  const size_t baseline = SettledFds(d);
  auto c = Connected(d);
  REQUIRE(c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(1)))->status == 0);
  REQUIRE(c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "hog")))->status == 0);
  const size_t with_file = d.OpenFds();
  constexpr int kRequests = 4000;
  for (int i = 0; i < kRequests; ++i) c.Queue(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}));
  // The daemon stops reading once its replies back up, so send from a thread: the test must
  // not block on a full socket.
  std::thread sender([&] { c.Flush(); });
  const auto sent = std::chrono::steady_clock::now();
  size_t peak = 0;
  bool dropped = false;
  while (!dropped && SecondsSince(sent) < 15) {
    peak = std::max(peak, d.OpenFds());
    dropped = HungUpUnread(c.fd(), 100ms);
  }
  const double drop_s = SecondsSince(sent);
  ::shutdown(c.fd(), SHUT_RDWR);  // unblocks the sender if the daemon never read it all
  sender.join();
  CHECK(dropped);
  CHECK(drop_s < 3 + 9);  // the idle timeout plus the loop's and a loaded machine's slack
  CHECK(d.WaitForLog("did not read its replies within 3 s"));
  // Bounded while it stalled: one turn's descriptors (16) over the connection and its file.
  CHECK(peak <= with_file + 16 + 1);
  // The descriptors still in flight in the unread socket keep the file open for writing, and
  // the daemon keeps counting a passed file until nobody writes it (SECURITY.md): close the
  // connection, then the tick after lets the file go.
  { RawClient gone = std::move(c); }
  size_t after = SettledFds(d);
  for (const auto until = std::chrono::steady_clock::now() + 15s;
       after > baseline + 1 && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(200ms);
    after = SettledFds(d);
  }
  Measure("stall.get_fd_requests", kRequests);
  Measure("stall.fds_baseline", baseline);
  Measure("stall.fds_peak", peak);
  Measure("stall.fds_after_drop", after);
  Measure("stall.drop_ms", static_cast<long>(drop_s * 1000));
  // Everything released: the connection, its file and the passed copies (the cached process
  // dir descriptor stays, as for any client that wrote an event).
  CHECK(after <= baseline + 1);
  auto next = Connected(d);
  std::string err;
  CHECK_FALSE(next.Emit(ATR_EVENT_SCHEDULE, "after", "ok", &err).empty());
  CHECK(err.empty());
}

TEST_CASE("a request trickled one byte every 2 s is dropped at the idle timeout", "[hardening][stall]") {
  DaemonProcess d({{"--idle-timeout", "3"}, {}, true, 10});
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, ATR_OP_STATUS, 0, 7, {});
  const auto start = std::chrono::steady_clock::now();
  bool dropped = false;
  size_t sent = 0;
  for (; sent < frame.size() && !dropped; ++sent) {
    if (::send(c.fd(), &frame[sent], 1, MSG_NOSIGNAL) != 1) {
      dropped = true;
      break;
    }
    dropped = HungUpUnread(c.fd(), 2s);
  }
  const double drop_s = SecondsSince(start);
  Measure("trickle.bytes_sent_before_drop", sent);
  Measure("trickle.drop_ms", static_cast<long>(drop_s * 1000));
  CHECK(dropped);
  CHECK(sent < frame.size());  // never completed
  CHECK(drop_s < 3 + 9);  // the idle timeout and a loaded machine's slack; the frame takes 30 s
  CHECK(d.WaitForLog("a request was not completed within 3 s"));
  auto again = Connected(d);
  CHECK(QueryStatus(again).clients == 1);
}

TEST_CASE("10,000 pipelined requests in one write get 10,000 replies in order", "[hardening][stall]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  constexpr uint32_t kRequests = 10000;
  const uint32_t first_id = c.last_request_id() + 1;
  for (uint32_t i = 0; i < kRequests; ++i) c.Queue(ATR_OP_STATUS, {});
  std::thread sender([&] { c.Flush(); });  // replies must be read while it sends
  uint32_t in_order = 0;
  for (uint32_t i = 0; i < kRequests; ++i) {
    auto r = c.Read();
    if (!r || r->status != 0 || r->header.request_id != first_id + i) break;
    ++in_order;
  }
  sender.join();
  Measure("pipelined.replies_in_order", in_order);
  CHECK(in_order == kRequests);
}

TEST_CASE("descriptors sent to the daemon are never kept or used", "[hardening][security]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);  // 1.0: descriptor passing from the daemon only
  const size_t before = SettledFds(d);
  // A STATUS request carrying descriptors of a directory and of a pipe, as SCM_RIGHTS.
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, ATR_OP_STATUS, 0, 4242, {});
  int fds[3] = {pipefd[0], pipefd[1], ::open("/", O_RDONLY | O_DIRECTORY)};
  iovec iov{frame.data(), frame.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(cm), fds, sizeof fds);
  SECTION("a 1.0 session reads plainly: the kernel discards them, the requests are served") {
    for (int i = 0; i < 50; ++i) REQUIRE(::sendmsg(c.fd(), &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size()));
    for (int i = 0; i < 50; ++i) {
      auto r = c.Read();
      REQUIRE(r);
      CHECK(r->status == 0);
    }
  }
  SECTION("a 1.1 session takes them: three with one STATUS frame is a violation that hangs up") {
    auto ring = RawClient::Connect(d.socket());
    REQUIRE(ring);
    REQUIRE(ring->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD));
    REQUIRE(::sendmsg(ring->fd(), &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size()));
    CHECK(ring->SeesHangUp());
    CHECK(d.WaitForLog("protocol violation: more than one descriptor with one frame"));
  }
  for (int fd : fds) ::close(fd);
  const size_t after = FdsDownTo(d, before);
  Measure("passed_in.daemon_fds_before", before);
  Measure("passed_in.daemon_fds_after", after);
  CHECK(after == before);
}
