#include "daemon_link.h"

#include "atraced/base/send_fd.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "atraced/proto/ledger_layout.h"
#include "atraced/proto/ring_layout.h"
#include "crash_channel.h"
#include "crash_handler.h"
#include "outage_line.h"
#include "ring_clock.h"
#include "endpoint.h"  // client/src: the socket paths and a deadline-bounded connect
#include "state.h"

namespace ascend_trace {

namespace proto = atraced::proto;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kConnectMs = 1000;  // connect + HELLO
constexpr int kReplyMs = 1000;    // an ordinary reply
constexpr int kWriteMs = 5000;    // a reply that waits for files to be written
constexpr auto kHungBackoff = std::chrono::seconds(1);

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

// Waits for `events` on fd until the deadline: 0, -ETIMEDOUT or -errno.
int Wait(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, RemainingMs(deadline));
    if (r > 0) return 0;
    if (r == 0) return -ETIMEDOUT;
    if (errno != EINTR) return -errno;
  }
}

}  // namespace

DaemonLink::DaemonLink() = default;
DaemonLink::~DaemonLink() = default;

void DaemonLink::Drop() {
  SetCrashChannel(-1, 0);  // before the close: the handler must not use a reused number
  crash_sock_.reset();
  sock_.reset();  // close(), never shutdown(): after fork() the socket may be shared
  decoder_.reset();
  daemon_pid_ = 0;
}

void DaemonLink::ForgetAfterFork() {
  ResetCrashChannelAfterFork();  // before Drop: the parent's claim is no thread's here
  Drop();
  owner_ = 0;
  outage_logged_ = false;
  retry_after_ = {};
}


void DaemonLink::NoteOutage(int err) {
  last_error_ = err;
  if (outage_logged_) return;
  outage_logged_ = true;
  if (QuietOutages()) return;
  std::fprintf(stderr, "libascend_trace: %s; trace saves fail until it is back (ATRACE_QUIET=1 silences this)\n",
               DescribeUnreachable(atrace_client_internal::CandidateSocketPaths(nullptr), err < 0 ? -err : err).c_str());
}

int DaemonLink::Connect() {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kConnectMs);
  const auto paths = atrace_client_internal::CandidateSocketPaths(nullptr);
  int rc = -ENOENT;
  std::string connected_path;
  for (const std::string& path : paths) {
    atraced::UniqueFd fd;
    rc = atrace_client_internal::ConnectUnix(path, atrace_client_internal::Deadline::In(RemainingMs(deadline)), &fd);
    if (rc == 0) {
      sock_ = std::move(fd);
      connected_path = path;
      break;
    }
  }
  if (rc != 0) return rc;
  decoder_ = std::make_unique<proto::FrameDecoder>();
  // ATR_FEATURE_CRASH here only asks whether the daemon offers it (CRASH itself goes on the
  // second connection).
  const uint64_t features = ATR_FEATURE_MEMFD | (CrashHandlersEnabled() ? ATR_FEATURE_CRASH : 0) |
                            (CounterStampsWanted() ? ATR_FEATURE_RING_COUNTER : 0) | ATR_FEATURE_LABELS |
                            ATR_FEATURE_HANG_TIMEOUT | ATR_FEATURE_LEDGER;
  proto::HelloReply reply;
  rc = Hello(sock_.get(), *decoder_, next_request_id_++, features, deadline, &reply);
  if (rc != 0) {
    Drop();
    return rc;
  }
  if ((reply.features & ATR_FEATURE_MEMFD) == 0) {  // a 1.0 daemon: it cannot hold rings
    Drop();
    return -ENOTSUP;
  }
  daemon_pid_ = reply.daemon_pid;
  granted_ = reply.features;
  if (reply.features & ATR_FEATURE_LABELS) SendLabels(deadline);
  if (!sock_.valid()) return -ECONNRESET;  // the labels' exchange lost the connection
  if (reply.features & ATR_FEATURE_CRASH) OpenCrashChannel(connected_path, deadline);
  return 0;
}

void DaemonLink::SendLabels(Clock::time_point deadline) {
  // Read once, at the first connection: the environment of the process's start. A variable
  // that is not a label is left out (said once), the others sent.
  static std::string refused;
  static const proto::LabelsRequest labels = [] {
    auto get = [](const char* name) -> const char* { return ::getenv(name); };
    return proto::LabelsRequest{proto::CheckedLabelsFromEnvironment(get, &refused),
                                proto::HangTimeoutFromEnvironment(get)};
  }();
  static std::atomic<bool> told{false};
  const char* quiet = ::getenv("ATRACE_QUIET");
  const bool loud = !(quiet != nullptr && std::strcmp(quiet, "1") == 0);
  if (!refused.empty() && loud && !told.exchange(true)) {
    const std::string line = "libascend_trace: a job/rank label of the environment is not sent: " + refused + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  // The hang timeout only to a daemon that knows it (an older one refuses the bytes).
  proto::LabelsRequest sent = labels;
  if (!(granted_ & ATR_FEATURE_HANG_TIMEOUT)) sent.hang_timeout.clear();
  if (sent.labels.empty() && sent.hang_timeout.empty()) return;
  std::vector<uint8_t> payload, frame;
  proto::Encode(sent, payload);
  const uint32_t id = next_request_id_++;
  proto::AppendFrame(frame, ATR_OP_LABELS, 0, id, payload);
  std::string message;
  int rc = SendAll(sock_.get(), frame, -1, deadline);
  if (rc == 0) rc = ReadReply(sock_.get(), *decoder_, ATR_OP_LABELS, id, deadline, nullptr, &message);
  if (rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -EPIPE || rc == -EPROTO) {
    Drop();
    return;
  }
  if (rc != 0 && loud && !told.exchange(true)) {
    const std::string line = "libascend_trace: atraced refused this process's job/rank labels: " + message + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
}

int DaemonLink::Hello(int sock, proto::FrameDecoder& decoder, uint32_t request_id, uint64_t features,
                      Clock::time_point deadline, proto::HelloReply* reply) {
  proto::Hello hello{ATR_VERSION_MAJOR, ATR_VERSION_MINOR_MEMFD, features};
  std::vector<uint8_t> payload, frame, body;
  proto::Encode(hello, payload);
  proto::AppendFrame(frame, ATR_OP_HELLO, 0, request_id, payload);
  int rc = SendAll(sock, frame, -1, deadline);
  if (rc == 0) rc = ReadReply(sock, decoder, ATR_OP_HELLO, request_id, deadline, &body);
  if (rc != 0) return rc < 0 ? rc : -EPROTO;
  if (!proto::Decode(body, reply).ok() || reply->major != ATR_VERSION_MAJOR) return -EPROTO;
  return 0;
}

void DaemonLink::OpenCrashChannel(const std::string& path, Clock::time_point deadline) {
  atraced::UniqueFd fd;
  if (atrace_client_internal::ConnectUnix(path, atrace_client_internal::Deadline::In(RemainingMs(deadline)), &fd) != 0) {
    return;
  }
  proto::FrameDecoder decoder;
  proto::HelloReply reply;
  // ATR_FEATURE_CRASH_PATH: CRASH's reply names the report, which the handler tells the user.
  constexpr uint64_t kWanted = ATR_FEATURE_MEMFD | ATR_FEATURE_CRASH | ATR_FEATURE_STACK_DUMP | ATR_FEATURE_CRASH_PATH;
  if (Hello(fd.get(), decoder, 1, kWanted, deadline, &reply) != 0 ||
      !(reply.features & ATR_FEATURE_CRASH) || decoder.buffered() != 0) {
    return;
  }
  crash_sock_ = std::move(fd);
  InstallCrashHandlers();
  SetCrashChannel(crash_sock_.get(), static_cast<pid_t>(reply.daemon_pid),
                  (reply.features & ATR_FEATURE_STACK_DUMP) != 0);
}

int DaemonLink::EnsureConnected(State& s) {
  if (sock_.valid() && owner_ == ::getpid()) {
    // Readable while idle means the daemon hung up (a restart) or broke the protocol.
    pollfd p{sock_.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) return 0;
    Drop();
  }
  if (Clock::now() < retry_after_) return last_error_;
  const int rc = Connect();
  if (rc != 0) {
    if (rc == -ETIMEDOUT) retry_after_ = Clock::now() + kHungBackoff;  // hung: do not stall every call
    NoteOutage(rc);
    return rc;
  }
  owner_ = ::getpid();
  ++epoch_;
  if (outage_logged_ && !QuietOutages()) std::fprintf(stderr, "libascend_trace: reconnected to atraced\n");
  outage_logged_ = false;
  retry_after_ = {};
  RegisterAll(s);
  return sock_.valid() ? 0 : last_error_;
}

void DaemonLink::RegisterAll(State& s) {
  const pid_t self = ::getpid();
  for (ObjectSlot& o : s.objects) {
    if (!o.live || o.pid != self || !o.memfd.valid()) continue;
    if (SendRegister(s, o.name, o.wire_id, o.exit_save, o.shape, o.mapped_bytes, o.structs, o.memfd.get()) == 0) {
      o.registered_epoch = epoch_;
    }
  }
  if (s.ledger.valid()) SendLedger(s);
  // Destroyed exitSave objects: registered and released again, so the exit save has them.
  for (auto& r : s.released) {
    if (SendRegister(s, r->name, r->wire_id, true, r->shape, r->mapped_bytes, r->structs, r->memfd.get()) == 0) {
      r->registered_epoch = epoch_;
      proto::IdRequest release{r->wire_id};
      std::vector<uint8_t> payload;
      proto::Encode(release, payload);
      Exchange(ATR_OP_RING_RELEASE, payload, -1, kReplyMs);
    }
  }
}

int DaemonLink::SendRegister(State&, const std::string& name, uint32_t wire_id, bool exit_save, const RingShape& shape,
                             uint64_t ring_bytes, const std::vector<proto::RingStructEntry>& structs, int memfd,
                             uint8_t kind_flags) {
  proto::RingRegister m;
  m.object_id = wire_id;
  m.flags = static_cast<uint8_t>((exit_save ? ATR_RING_EXIT_SAVE : 0) | (shape.no_lock ? ATR_RING_NO_LOCK : 0) |
                                 (shape.counter ? ATR_RING_COUNTER : 0) | kind_flags);
  m.msg_num = shape.msg_num;
  m.msg_size = shape.msg_size;
  m.ring_bytes = static_cast<uint32_t>(ring_bytes);
  m.utc_offset_s = LocalUtcOffsetSeconds();
  m.name = name;
  m.structs = structs;
  std::vector<uint8_t> payload;
  proto::Encode(m, payload);
  const int rc = Exchange(ATR_OP_RING_REGISTER, payload, memfd, kReplyMs);
  if (rc < 0 && sock_.valid()) {
    std::fprintf(stderr, "libascend_trace: atraced refused object %s (%s)\n", name.c_str(),
                 proto::StatusName(rc).data());
  }
  return rc;
}

int DaemonLink::SendLedger(State& s) {
  if (!(granted_ & ATR_FEATURE_LEDGER)) return -ENOTSUP;  // an older daemon: the ledger stays in the process
  LedgerSlot& l = s.ledger;
  // Saved at a clean exit too (GOODBYE): the last collectives of a job that ends are evidence.
  const RingShape shape{l.records, ATR_LEDGER_RECORD_SIZE, false, false};
  const int rc = SendRegister(s, "hccl", l.wire_id, /*exit_save=*/true, shape, l.bytes, {}, l.memfd.get(), ATR_RING_LEDGER);
  if (rc == 0) l.registered_epoch = epoch_;
  return rc;
}

int DaemonLink::RegisterLedger(State& s) {
  const uint64_t before = epoch_;
  if (int rc = EnsureConnected(s); rc != 0) return rc;
  if (epoch_ != before && s.ledger.registered_epoch == epoch_) return 0;  // a fresh connect registered it
  return SendLedger(s);
}

bool DaemonLink::CounterRingsAccepted(State& s) {
  if (EnsureConnected(s) != 0) return true;
  return (granted_ & ATR_FEATURE_RING_COUNTER) != 0;
}

void DaemonLink::Register(State& s, ObjectSlot& o) {
  const uint64_t before = epoch_;
  if (EnsureConnected(s) != 0) return;
  if (epoch_ != before && o.registered_epoch == epoch_) return;  // a fresh connect registered it
  if (SendRegister(s, o.name, o.wire_id, o.exit_save, o.shape, o.mapped_bytes, o.structs, o.memfd.get()) == 0) {
    o.registered_epoch = epoch_;
  }
}

void DaemonLink::Release(State&, uint32_t wire_id) {
  if (!sock_.valid() || owner_ != ::getpid()) return;
  proto::IdRequest m{wire_id};
  std::vector<uint8_t> payload;
  proto::Encode(m, payload);
  Exchange(ATR_OP_RING_RELEASE, payload, -1, kReplyMs);
}

int DaemonLink::Report(State& s, const std::vector<const ObjectSlot*>& objects, bool wait) {
  if (int rc = EnsureConnected(s); rc != 0) return rc;
  proto::RingReport m;
  m.wait = wait;
  for (const ObjectSlot* o : objects) {
    // Only rings this connection knows; one the daemon refused cannot be saved.
    if (o->registered_epoch == epoch_) m.object_ids.push_back(o->wire_id);
  }
  if (m.object_ids.empty()) return -ENOENT;
  std::vector<uint8_t> payload;
  proto::Encode(m, payload);
  return Exchange(ATR_OP_RING_REPORT, payload, -1, wait ? kWriteMs : kReplyMs);
}

int DaemonLink::SaveAll(State& s, bool wait) {
  if (int rc = EnsureConnected(s); rc != 0) return rc;
  proto::RingSaveAll m{wait, 0};
  std::vector<uint8_t> payload;
  proto::Encode(m, payload);
  return Exchange(ATR_OP_RING_SAVE_ALL, payload, -1, wait ? kWriteMs : kReplyMs);
}

void DaemonLink::Goodbye(State& s) {
  bool exit_save = !s.released.empty() || s.ledger.valid();
  for (const ObjectSlot& o : s.objects) exit_save = exit_save || (o.live && o.exit_save && o.pid == ::getpid());
  const bool connected = sock_.valid() && owner_ == ::getpid();
  if (!connected && !exit_save) return;  // nothing the daemon holds or should write
  if (EnsureConnected(s) != 0) return;
  std::vector<uint8_t> payload;
  proto::Encode(proto::Goodbye{}, payload);
  Exchange(ATR_OP_GOODBYE, payload, -1, kWriteMs);
  Drop();
}

int DaemonLink::Exchange(uint16_t opcode, const std::vector<uint8_t>& payload, int fd, int timeout_ms,
                         std::vector<uint8_t>* body) {
  if (!sock_.valid()) return -ENOTCONN;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const uint32_t id = next_request_id_++;
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, opcode, 0, id, payload);
  int rc = SendAll(sock_.get(), frame, fd, deadline);
  if (rc == 0) rc = ReadReply(sock_.get(), *decoder_, opcode, id, deadline, body);
  if (rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -EPIPE || rc == -EPROTO) {
    // The stream's state is unknown now (a late reply would be mistaken for the next one).
    Drop();
    NoteOutage(rc);
  }
  return rc;
}

int DaemonLink::SendAll(int sock, const std::vector<uint8_t>& frame, int fd, Clock::time_point deadline) {
  size_t sent = 0;
  bool fd_sent = fd < 0;
  while (sent < frame.size()) {
    // Exactly one descriptor, on the frame's first byte (PROTOCOL.md, RING_REGISTER).
    // MSG_NOSIGNAL: a daemon that hung up is EPIPE here, never SIGPIPE in the application.
    const ssize_t n = atraced::SendWithFd(sock, frame.data() + sent, frame.size() - sent, fd_sent ? -1 : fd,
                                          MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      fd_sent = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (int rc = Wait(sock, POLLOUT, deadline); rc != 0) return rc;
      continue;
    }
    return (n < 0 && errno != EPIPE && errno != ECONNRESET) ? -errno : -ECONNRESET;
  }
  return 0;
}

int DaemonLink::ReadReply(int sock, proto::FrameDecoder& decoder, uint16_t opcode, uint32_t request_id,
                          Clock::time_point deadline, std::vector<uint8_t>* body, std::string* message) {
  for (;;) {
    proto::FrameHeader h;
    std::span<const uint8_t> payload;
    const auto r = decoder.Next(&h, &payload);
    if (r == proto::FrameDecoder::Result::kError) return -EPROTO;
    if (r == proto::FrameDecoder::Result::kFrame) {
      if (h.flags != ATR_FLAG_REPLY || h.opcode != opcode || h.request_id != request_id) return -EPROTO;
      proto::ReplyHead head;
      if (!proto::DecodeReply(payload, &head).ok()) return -EPROTO;
      if (body != nullptr) body->assign(head.body.begin(), head.body.end());
      if (message != nullptr) *message = head.message;
      return head.status;
    }
    auto space = decoder.WritableSpace(4096);
    // No reply of ours carries a descriptor: any the daemon sends is closed with `stray`.
    std::vector<atraced::UniqueFd> stray;
    const ssize_t n = atraced::RecvWithFds(sock, space.data(), space.size(), MSG_DONTWAIT, 4, &stray, nullptr);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (int rc = Wait(sock, POLLIN, deadline); rc != 0) return rc;
      continue;
    }
    if (n <= 0) return n == 0 || errno == ECONNRESET ? -ECONNRESET : -errno;
    decoder.Commit(static_cast<size_t>(n));
  }
}

}  // namespace ascend_trace
