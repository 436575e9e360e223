#include "client.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

#include "atraced/base/name_rule.h"
#include "endpoint.h"

namespace atrace_client_internal {

namespace proto = atraced::proto;

namespace {

bool IsTime(const char* t) { return t == nullptr || std::strlen(t) == ATR_TIME_LEN; }

std::string Time(const char* t) { return t == nullptr ? std::string() : std::string(t); }

}  // namespace

int CheckEventSpec(const atrace_event_spec& spec, std::string* why) {
  if (spec.kind < ATRACE_EVENT_SCHEDULE || spec.kind > ATRACE_EVENT_EXIT) {
    *why = "event kind: must be schedule (1), stackcore (2) or exit (3)";
    return -EINVAL;
  }
  if (spec.side != ATRACE_SIDE_HOST && spec.side != ATRACE_SIDE_DEVICE) {
    *why = "event side: must be host (0) or device (1)";
    return -EINVAL;
  }
  if (!IsTime(spec.time)) {
    *why = "time: must be 20 digits YYYYMMDDhhmmssmmmuuu";
    return -EINVAL;
  }
  // What the daemon would refuse is refused here, before anything is sent: a refusal after
  // EVENT_BEGIN would have made (and aged for) a directory the event never fills.
  if (spec.side == ATRACE_SIDE_HOST && spec.device_id != 0) {
    *why = "device_id: must be 0 for a host event";
    return -EINVAL;
  }
  if (spec.device_id > ATR_MAX_DEVICE_ID) {
    *why = "device_id: " + std::to_string(spec.device_id) + " out of range 0.." + std::to_string(ATR_MAX_DEVICE_ID);
    return -EINVAL;
  }
  return 0;
}

int CheckFileSpec(const atrace_file_spec& spec, std::string* why) {
  if (spec.form < ATRACE_FILE_OBJECT || spec.form > ATRACE_FILE_STACKCORE) {
    *why = "file form: must be object (1), ts (2) or stackcore (3)";
    return -EINVAL;
  }
  // STACKCORE may leave the program name out: the daemon then takes the peer's own from
  // the kernel.
  if (spec.form == ATRACE_FILE_OBJECT && spec.name == nullptr) {
    *why = "object name: required";
    return -EINVAL;
  }
  // Longer names cannot be right for any form; refusing them here also keeps them within
  // the wire's u16 length.
  if (spec.name != nullptr && std::strlen(spec.name) > ATR_MAX_PROGRAM_NAME) {
    *why = "name: longer than 63 bytes";
    return -ENAMETOOLONG;
  }
  if (!IsTime(spec.time)) {
    *why = "time: must be 20 digits YYYYMMDDhhmmssmmmuuu";
    return -EINVAL;
  }
  // The one name rule (base/name_rule.h), as the daemon's decoder applies it.
  // Checked in the decoder's order: the length first, then the characters.
  const bool object = spec.form == ATRACE_FILE_OBJECT;
  if (spec.name != nullptr && (object || (spec.form == ATRACE_FILE_STACKCORE && spec.name[0] != '\0'))) {
    const char* field = object ? "object name: " : "program name: ";
    const size_t len = std::strlen(spec.name);
    if (object && len > ATR_MAX_OBJECT_NAME) {
      *why = field + std::to_string(len) + " bytes, limit " + std::to_string(ATR_MAX_OBJECT_NAME);
      return -ENAMETOOLONG;
    }
    std::string rule;
    if (!atraced::IsSafeName(spec.name, &rule)) {
      *why = field + rule;
      return -EINVAL;
    }
  }
  return 0;
}

int Connect(atrace_client& c) {
  c.conn.reset();
  Deadline deadline = Deadline::In(c.connect_timeout_ms);
  int result = -ENOENT;
  for (const auto& path : c.socket_paths) {
    std::string message;
    int rc = Connection::Open(path, c.features, c.labels, deadline, &c.conn, &message);
    if (rc == 0) {
      ++c.stats.connects;
      return 0;
    }
    // Report the most telling failure: "there is a socket but..." beats "no socket here".
    if (result == -ENOENT || rc != -ENOENT) result = rc;
    if (!message.empty()) c.last_message = message;
    if (rc == -ETIMEDOUT) break;  // the deadline is spent
  }
  return result;
}

void Drop(atrace_client& c, int why) {
  c.conn.reset();
  ++c.generation;
  for (auto& ev : c.async) {
    (void)ev;
    ++c.stats.async_failed;
  }
  if (!c.async.empty() && c.async_first_error == 0) c.async_first_error = why;
  c.async.clear();
  c.stats.in_flight = 0;
}

void ForgetIfForked(atrace_client& c) {
  if (c.conn && c.conn->owner_pid() != ::getpid()) {
    // A fork child: the socket and whatever is in flight belong to the parent. Closing our
    // copy of the descriptor leaves the parent's connection untouched.
    c.conn.reset();
    ++c.generation;
    c.async.clear();
    c.stats.in_flight = 0;
    c.async_first_error = 0;
  }
}

int Ready(atrace_client& c) {
  ForgetIfForked(c);
  if (c.conn && c.conn->outstanding() == 0 && !c.conn->has_unsent() && c.conn->LooksDead()) {
    Drop(c, -ECONNRESET);
  }
  if (!c.conn) {
    ++c.generation;  // nothing opened before this point can be used on the new connection
    return Connect(c);
  }
  return 0;
}

void AccountAsync(atrace_client& c) {
  auto& inbox = c.conn->inbox();
  while (!inbox.empty() && inbox.front().tag != 0) {
    Reply r = std::move(inbox.front());
    inbox.pop_front();
    if (c.async.empty() || c.async.front().tag != r.tag) continue;  // cannot happen: in order
    AsyncEvent& ev = c.async.front();
    if (r.status < 0 && !ev.failed) {
      ev.failed = true;
      if (c.async_first_error == 0) c.async_first_error = r.status;
      c.last_message = r.message;
    }
    if (--ev.replies_left == 0) {
      ++(ev.failed ? c.stats.async_failed : c.stats.async_ok);
      c.async.pop_front();
    }
  }
  c.stats.in_flight = static_cast<uint32_t>(c.async.size());
}

int Transact(atrace_client& c, std::vector<Reply>* replies) {
  ++c.stats.round_trips;
  int rc = c.conn->Pump(Deadline::In(c.io_timeout_ms), 0);
  if (rc != 0) {
    Drop(c, rc);
    return rc;
  }
  // Replies come in request order; asynchronous ones queued earlier come first.
  auto& inbox = c.conn->inbox();
  while (!inbox.empty()) {
    if (inbox.front().tag != 0) {
      AccountAsync(c);
      continue;
    }
    replies->push_back(std::move(inbox.front()));
    inbox.pop_front();
  }
  return 0;
}

int FirstError(atrace_client& c, const std::vector<Reply>& replies) {
  for (const auto& r : replies) {
    if (r.status < 0) {
      c.last_message = r.message;
      return r.status;
    }
  }
  return 0;
}

uint32_t NextObjectId(atrace_client& c) {
  uint32_t id = c.next_object_id++;
  if (id == 0) id = c.next_object_id++;  // 0 is not a valid id; skip it on wrap-around
  return id;
}

void QueueId(atrace_client& c, uint16_t opcode, uint32_t id, uint64_t tag) {
  std::vector<uint8_t> payload;
  proto::Encode(proto::IdRequest{id}, payload);
  c.conn->Queue(opcode, payload, tag);
}

void QueueAppends(atrace_client& c, uint64_t tag, uint32_t file_id, const uint8_t* data, size_t len) {
  size_t off = 0;
  do {
    size_t n = std::min<size_t>(len - off, ATR_MAX_APPEND);
    proto::FileAppend a;
    a.file_id = file_id;
    a.data = std::span<const uint8_t>(data == nullptr ? reinterpret_cast<const uint8_t*>("") : data + off, n);
    c.conn->QueueAppend(a, tag);
    off += n;
  } while (off < len);
}

size_t QueueEvent(atrace_client& c, uint64_t tag, const atrace_event_spec& ev, const atrace_file_spec& file,
                  const uint8_t* data, size_t len, uint32_t event_id, uint32_t file_id, bool via_fd) {
  size_t before = c.conn->outstanding();
  proto::EventBegin b;
  b.event_id = event_id;
  b.kind = static_cast<uint8_t>(ev.kind);
  b.side = static_cast<uint8_t>(ev.side);
  b.device_id = ev.device_id;
  b.time = Time(ev.time);
  std::vector<uint8_t> payload;
  proto::Encode(b, payload);
  c.conn->Queue(ATR_OP_EVENT_BEGIN, payload, tag);

  proto::FileOpen o;
  o.event_id = event_id;
  o.file_id = file_id;
  o.form = static_cast<uint8_t>(file.form);
  o.suffix = (file.form == ATRACE_FILE_OBJECT && file.binary) ? ATR_SUFFIX_BIN : ATR_SUFFIX_TXT;
  o.device_id = file.form == ATRACE_FILE_TS ? file.device_id : 0;
  o.signo = file.form == ATRACE_FILE_STACKCORE ? file.signo : 0;
  o.tid = file.form == ATRACE_FILE_STACKCORE ? file.tid : 0;
  o.time = file.form == ATRACE_FILE_STACKCORE ? Time(file.time) : std::string();
  o.name = (file.form == ATRACE_FILE_TS || file.name == nullptr) ? std::string() : std::string(file.name);
  payload.clear();
  proto::Encode(o, payload);
  c.conn->Queue(ATR_OP_FILE_OPEN, payload, tag);

  if (via_fd) {
    QueueId(c, ATR_OP_FILE_GET_FD, file_id, tag);
  } else {
    if (len > 0) QueueAppends(c, tag, file_id, data, len);
    QueueId(c, ATR_OP_FILE_CLOSE, file_id, tag);
    QueueId(c, ATR_OP_EVENT_END, event_id, tag);
  }
  return c.conn->outstanding() - before;
}

int WriteAll(int fd, const uint8_t* data, size_t len) {
  size_t off = 0;
  while (off < len) {
    ssize_t n = ::write(fd, data + off, len - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    off += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace atrace_client_internal
