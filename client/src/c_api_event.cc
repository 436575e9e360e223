// Events and files step by step: begin, open, write (streamed or through the passed
// descriptor), close, end.
#include <errno.h>

#include <algorithm>

#include "atraced/atrace_client.h"
#include "atraced/proto/codec.h"
#include "client.h"
#include "guard.h"

using namespace atrace_client_internal;
namespace proto = atraced::proto;

namespace {

// An event or file opened on a connection that has since been dropped (daemon restart,
// timeout, fork) cannot be used: the daemon has already ended it.
bool Lost(const atrace_client& c, uint64_t generation) { return !c.conn || c.generation != generation; }

// One request, one reply. Returns the transport error or the reply's status.
int Call(atrace_client& c, Reply* reply) {
  std::vector<Reply> replies;
  int rc = Transact(c, &replies);
  if (rc != 0) return rc;
  rc = FirstError(c, replies);
  *reply = std::move(replies.front());
  return rc;
}

void Detach(atrace_file* f) {
  f->event = nullptr;
  f->fd.reset();
}

}  // namespace

extern "C" {

int atrace_event_begin(atrace_client* client, const atrace_event_spec* spec, atrace_event** out) {
  if (out != nullptr) *out = nullptr;
  if (client == nullptr || spec == nullptr || out == nullptr) return -EINVAL;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(client->mu);
    atrace_client& c = *client;
    int rc = CheckEventSpec(*spec, &c.last_message);
    if (rc == 0) rc = Ready(c);
    if (rc != 0) return rc;
    proto::EventBegin b;
    b.event_id = NextObjectId(c);
    b.kind = static_cast<uint8_t>(spec->kind);
    b.side = static_cast<uint8_t>(spec->side);
    b.device_id = spec->device_id;
    b.time = spec->time != nullptr ? spec->time : "";
    std::vector<uint8_t> payload;
    proto::Encode(b, payload);
    c.conn->Queue(ATR_OP_EVENT_BEGIN, payload, 0);
    Reply r;
    rc = Call(c, &r);
    if (rc != 0) return rc;
    proto::PathReply p;
    if (!proto::Decode(r.body, &p).ok()) return -EPROTO;
    *out = new atrace_event{client, c.generation, b.event_id, std::move(p.path), {}};
    return 0;
  });
}

int atrace_event_end(atrace_event* event, uint64_t* bytes) {
  if (event == nullptr) return -EINVAL;
  std::unique_ptr<atrace_event> owned(event);  // freed whatever happens
  atrace_client& c = *event->client;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(c.mu);
    for (atrace_file* f : event->files) Detach(f);  // the daemon closes them with the event
    if (c.conn && c.conn->owner_pid() != ::getpid()) return -ECONNRESET;
    if (Lost(c, event->generation)) return -ECONNRESET;
    QueueId(c, ATR_OP_EVENT_END, event->id, 0);
    Reply r;
    int rc = Call(c, &r);
    if (rc != 0) return rc;
    proto::SizeReply s;
    if (!proto::Decode(r.body, &s).ok()) return -EPROTO;
    if (bytes != nullptr) *bytes = s.size;
    return 0;
  });
}

const char* atrace_event_path(const atrace_event* event) { return event == nullptr ? "" : event->path.c_str(); }

int atrace_file_open(atrace_event* event, const atrace_file_spec* spec, atrace_file** out) {
  if (out != nullptr) *out = nullptr;
  if (event == nullptr || spec == nullptr || out == nullptr) return -EINVAL;
  atrace_client& c = *event->client;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(c.mu);
    int rc = CheckFileSpec(*spec, &c.last_message);
    if (rc != 0) return rc;
    if (c.conn && c.conn->owner_pid() != ::getpid()) return -ECONNRESET;
    if (Lost(c, event->generation)) return -ECONNRESET;
    proto::FileOpen o;
    o.event_id = event->id;
    o.file_id = NextObjectId(c);
    o.form = static_cast<uint8_t>(spec->form);
    o.suffix = (spec->form == ATRACE_FILE_OBJECT && spec->binary) ? ATR_SUFFIX_BIN : ATR_SUFFIX_TXT;
    o.device_id = spec->form == ATRACE_FILE_TS ? spec->device_id : 0;
    o.signo = spec->form == ATRACE_FILE_STACKCORE ? spec->signo : 0;
    o.tid = spec->form == ATRACE_FILE_STACKCORE ? spec->tid : 0;
    o.time = (spec->form == ATRACE_FILE_STACKCORE && spec->time != nullptr) ? spec->time : "";
    o.name = (spec->form != ATRACE_FILE_TS && spec->name != nullptr) ? spec->name : "";
    std::vector<uint8_t> payload;
    proto::Encode(o, payload);
    c.conn->Queue(ATR_OP_FILE_OPEN, payload, 0);
    Reply r;
    rc = Call(c, &r);
    if (rc != 0) return rc;
    proto::PathReply p;
    if (!proto::Decode(r.body, &p).ok()) return -EPROTO;
    auto* f = new atrace_file{&c, event, c.generation, o.file_id, std::move(p.path), Fd()};
    event->files.push_back(f);
    *out = f;
    return 0;
  });
}

int atrace_file_write(atrace_file* file, const void* data, size_t len) {
  if (file == nullptr || (data == nullptr && len > 0)) return -EINVAL;
  atrace_client& c = *file->client;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(c.mu);
    if (file->event == nullptr) return -EBADF;  // its event ended
    if (file->fd.valid()) return WriteAll(file->fd.get(), static_cast<const uint8_t*>(data), len);
    if (c.conn && c.conn->owner_pid() != ::getpid()) return -ECONNRESET;
    if (Lost(c, file->generation)) return -ECONNRESET;
    if (len == 0) return 0;
    QueueAppends(c, 0, file->id, static_cast<const uint8_t*>(data), len);
    std::vector<Reply> replies;
    int rc = Transact(c, &replies);
    return rc != 0 ? rc : FirstError(c, replies);
  });
}

int atrace_file_get_fd(atrace_file* file, int* fd) {
  if (fd != nullptr) *fd = -1;
  if (file == nullptr || fd == nullptr) return -EINVAL;
  atrace_client& c = *file->client;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(c.mu);
    if (file->event == nullptr) return -EBADF;
    if (file->fd.valid()) {
      *fd = file->fd.get();
      return 0;
    }
    if (c.conn && c.conn->owner_pid() != ::getpid()) return -ECONNRESET;
    if (Lost(c, file->generation)) return -ECONNRESET;
    if (!(c.conn->granted_features() & ATR_FEATURE_FD_PASSING)) return -ENOTSUP;
    QueueId(c, ATR_OP_FILE_GET_FD, file->id, 0);
    Reply r;
    int rc = Call(c, &r);
    if (rc != 0) return rc;
    file->fd = std::move(r.fd);
    *fd = file->fd.get();
    return 0;
  });
}

int atrace_file_close(atrace_file* file, uint64_t* size) {
  if (file == nullptr) return -EINVAL;
  std::unique_ptr<atrace_file> owned(file);  // freed whatever happens
  atrace_client& c = *file->client;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(c.mu);
    file->fd.reset();
    if (file->event == nullptr) return 0;  // already closed by atrace_event_end
    auto& siblings = file->event->files;
    siblings.erase(std::remove(siblings.begin(), siblings.end(), file), siblings.end());
    if (c.conn && c.conn->owner_pid() != ::getpid()) return -ECONNRESET;
    if (Lost(c, file->generation)) return -ECONNRESET;
    QueueId(c, ATR_OP_FILE_CLOSE, file->id, 0);
    Reply r;
    int rc = Call(c, &r);
    if (rc != 0) return rc;
    proto::SizeReply s;
    if (!proto::Decode(r.body, &s).ok()) return -EPROTO;
    if (size != nullptr) *size = s.size;
    return 0;
  });
}

const char* atrace_file_path(const atrace_file* file) { return file == nullptr ? "" : file->path.c_str(); }

}  // extern "C"
