// One event with one file, synchronously (one round trip) or asynchronously (bounded
// pipelining for event churn).
#include <errno.h>

#include <cstring>

#include "atraced/atrace_client.h"
#include "atraced/proto/codec.h"
#include "client.h"
#include "guard.h"

using namespace atrace_client_internal;
namespace proto = atraced::proto;

namespace {

void CopyPath(const std::string& from, char* to, size_t size) {
  if (to == nullptr || size == 0) return;
  size_t n = std::min(from.size(), size - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

int CheckArgs(atrace_client& c, const atrace_event_spec* event, const atrace_file_spec* file, const void* data,
              size_t len) {
  if (event == nullptr || file == nullptr || (data == nullptr && len > 0)) return -EINVAL;
  int rc = CheckEventSpec(*event, &c.last_message);
  return rc != 0 ? rc : CheckFileSpec(*file, &c.last_message);
}

// BEGIN, OPEN, GET_FD in one write; the data through the descriptor; CLOSE, END in a second.
int EmitViaFd(atrace_client& c, const atrace_event_spec& event, const atrace_file_spec& file, const uint8_t* data,
              size_t len, std::string* path) {
  if (!(c.conn->granted_features() & ATR_FEATURE_FD_PASSING)) return -ENOTSUP;
  uint32_t eid = NextObjectId(c), fid = NextObjectId(c);
  QueueEvent(c, 0, event, file, data, len, eid, fid, true);
  std::vector<Reply> first;
  int rc = Transact(c, &first);
  if (rc != 0) return rc;
  int refused = FirstError(c, first);
  if (refused == 0) {
    proto::PathReply p;
    if (proto::Decode(first[1].body, &p).ok()) *path = p.path;
    rc = WriteAll(first[2].fd.get(), data, len);
    first[2].fd.reset();
  }
  // END even after a failure: it frees the ids on the daemon (an -ENOENT reply is harmless).
  if (first[1].status == 0) QueueId(c, ATR_OP_FILE_CLOSE, fid, 0);
  QueueId(c, ATR_OP_EVENT_END, eid, 0);
  std::vector<Reply> second;
  int rc2 = Transact(c, &second);
  if (refused != 0) return refused;
  if (rc != 0) return rc;
  return rc2 != 0 ? rc2 : FirstError(c, second);
}

}  // namespace

extern "C" {

int atrace_emit(atrace_client* client, const atrace_event_spec* event, const atrace_file_spec* file,
                const void* data, size_t len, unsigned flags, char* path, size_t path_size) {
  if (client == nullptr) return -EINVAL;
  if (path != nullptr && path_size > 0) path[0] = '\0';
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(client->mu);
    atrace_client& c = *client;
    int rc = CheckArgs(c, event, file, data, len);
    if (rc != 0) return rc;
    rc = Ready(c);
    if (rc != 0) return rc;
    auto bytes = static_cast<const uint8_t*>(data);
    std::string created;
    if (flags & ATRACE_EMIT_VIA_FD) {
      rc = EmitViaFd(c, *event, *file, bytes, len, &created);
    } else {
      // The whole event in one write, then its replies: one round trip (PROTOCOL.md).
      QueueEvent(c, 0, *event, *file, bytes, len, NextObjectId(c), NextObjectId(c), false);
      std::vector<Reply> replies;
      rc = Transact(c, &replies);
      if (rc == 0) {
        rc = FirstError(c, replies);
        proto::PathReply p;
        if (replies.size() > 1 && replies[1].status == 0 && proto::Decode(replies[1].body, &p).ok()) created = p.path;
      }
    }
    CopyPath(created, path, path_size);
    return rc;
  });
}

int atrace_emit_async(atrace_client* client, const atrace_event_spec* event, const atrace_file_spec* file,
                      const void* data, size_t len) {
  if (client == nullptr) return -EINVAL;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(client->mu);
    atrace_client& c = *client;
    int rc = CheckArgs(c, event, file, data, len);
    if (rc != 0) return rc;
    rc = Ready(c);
    if (rc != 0) return rc;
    // The bound: wait for the oldest events to complete until there is room. Replies
    // arrive in order, so completing the oldest means "all but the others' replies".
    Deadline deadline = Deadline::In(c.io_timeout_ms);
    while (c.async.size() >= c.max_in_flight) {
      rc = c.conn->Pump(deadline, c.conn->outstanding() - c.async.front().replies_left);
      if (rc != 0) {
        Drop(c, rc);
        return rc;
      }
      AccountAsync(c);
    }
    uint64_t tag = c.next_async_tag++;
    size_t n = QueueEvent(c, tag, *event, *file, static_cast<const uint8_t*>(data), len, NextObjectId(c),
                          NextObjectId(c), false);
    c.async.push_back(AsyncEvent{tag, n, false});
    c.stats.in_flight = static_cast<uint32_t>(c.async.size());
    // Send what the socket takes now and collect replies that are there, never blocking.
    rc = c.conn->Pump(deadline, 0, false);
    if (rc != 0) {
      Drop(c, rc);
      return rc;
    }
    AccountAsync(c);
    return 0;
  });
}

int atrace_client_flush(atrace_client* client) {
  if (client == nullptr) return -EINVAL;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(client->mu);
    atrace_client& c = *client;
    ForgetIfForked(c);
    if (c.conn && (!c.async.empty() || c.conn->has_unsent())) {
      int rc = c.conn->Pump(Deadline::In(c.io_timeout_ms), 0);
      if (rc != 0) {
        Drop(c, rc);
      } else {
        AccountAsync(c);
      }
    }
    int first = c.async_first_error;
    c.async_first_error = 0;
    return first;
  });
}

}  // extern "C"
