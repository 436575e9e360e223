// Reply payloads: atr_reply_head, then a per-opcode body.
//
// Body decoders ignore trailing bytes: a server may append fields in a later minor version
// (wire.h, STATUS). Reserved fields are still refused, because the server sends only what
// the negotiated (smaller) minor version defines.
#include <cassert>
#include <cerrno>
#include <string>

#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

// atraced holds errors as this system's errno values; the wire's are Linux's asm-generic
// ones (wire.h). WireStatus negates one into the other, so they must be the same numbers.
static_assert(EPERM == -ATR_EPERM && ENOENT == -ATR_ENOENT && ESRCH == -ATR_ESRCH && EIO == -ATR_EIO &&
              EBADF == -ATR_EBADF && EAGAIN == -ATR_EAGAIN && EACCES == -ATR_EACCES && EBUSY == -ATR_EBUSY &&
              EEXIST == -ATR_EEXIST && EINVAL == -ATR_EINVAL && EMFILE == -ATR_EMFILE && ENOSPC == -ATR_ENOSPC &&
              ENAMETOOLONG == -ATR_ENAMETOOLONG && ENOSYS == -ATR_ENOSYS && EPROTO == -ATR_EPROTO &&
              EBADMSG == -ATR_EBADMSG && ESHUTDOWN == -ATR_ESHUTDOWN && EMSGSIZE == -ATR_EMSGSIZE && EPROTONOSUPPORT == -ATR_EPROTONOSUPPORT &&
              ENOTSUP == -ATR_ENOTSUP);

using internal::CheckMinSize;
using internal::CheckCountFits;
using internal::CheckName;
using internal::CheckPath;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;
using internal::PutString16;
using internal::ReadString16;

// ---- reply head ----

void EncodeReplyOk(std::vector<uint8_t>& out) {
  PutI32(out, ATR_OK);
  PutU32(out, 0);  // reserved
}

int32_t WireStatus(const Status& s) { return s.ok() ? ATR_OK : -static_cast<int32_t>(s.err()); }

void EncodeReplyError(const Status& error, std::vector<uint8_t>& out) {
  assert(!error.ok());
  std::string_view message = error.message();
  if (message.size() > ATR_MAX_MESSAGE) {
    // Back off so the cut does not split a UTF-8 sequence: the byte after the cut must not
    // be a continuation byte (10xxxxxx).
    size_t cut = ATR_MAX_MESSAGE;
    while (cut > 0 && (static_cast<uint8_t>(message[cut]) & 0xC0) == 0x80) --cut;
    message = message.substr(0, cut);
  }
  PutI32(out, WireStatus(error));
  PutU32(out, 0);  // reserved
  PutString16(out, message);
}

Status DecodeReply(std::span<const uint8_t> payload, ReplyHead* m) {
  PROTO_TRY(CheckMinSize("reply", payload.size(), sizeof(atr_reply_head)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadI32(&m->status) && in.ReadU32(&reserved), "reply");
  PROTO_TRY(CheckReserved("reply reserved", reserved));
  m->message.clear();
  if (m->status > 0) {
    return Error(EINVAL, "status", std::to_string(m->status) + " is positive");
  }
  if (m->status < 0) {
    PROTO_TRY(ReadString16(in, "message", &m->message));
    if (m->message.size() > ATR_MAX_MESSAGE) {
      return Error(EBADMSG, "message",
                   std::to_string(m->message.size()) + " bytes, limit " +
                       std::to_string(ATR_MAX_MESSAGE));
    }
  }
  m->body = in.rest();
  return Status::Ok();
}

// ---- HELLO ----

void Encode(const HelloReply& m, std::vector<uint8_t>& out) {
  PutU16(out, m.major);
  PutU16(out, m.minor);
  PutU32(out, m.max_payload);
  PutU64(out, m.features);
  PutU32(out, m.peer_pid);
  PutU32(out, m.peer_uid);
  if (m.features & ATR_FEATURE_MEMFD) {  // 1.1: the body grows at its end
    PutU32(out, m.daemon_pid);
    PutU32(out, 0);  // reserved
  }
}

Status Decode(std::span<const uint8_t> body, HelloReply* m) {
  PROTO_TRY(CheckMinSize("HELLO reply", body.size(), sizeof(atr_hello_reply)));
  ByteReader in(body);
  PROTO_READ(in.ReadU16(&m->major) && in.ReadU16(&m->minor) && in.ReadU32(&m->max_payload) &&
                 in.ReadU64(&m->features) && in.ReadU32(&m->peer_pid) &&
                 in.ReadU32(&m->peer_uid),
             "HELLO reply");
  m->daemon_pid = 0;
  if (m->features & ATR_FEATURE_MEMFD) {
    // A daemon granting the feature speaks 1.1, whose reply carries its pid.
    PROTO_TRY(CheckMinSize("HELLO reply", body.size(), sizeof(atr_hello_reply) + sizeof(atr_hello_reply_memfd)));
    uint32_t reserved = 0;
    PROTO_READ(in.ReadU32(&m->daemon_pid) && in.ReadU32(&reserved), "HELLO reply");
    PROTO_TRY(CheckReserved("HELLO reply reserved", reserved));
  }
  return Status::Ok();
}

// ---- EVENT_BEGIN, FILE_OPEN ----

void Encode(const PathReply& m, std::vector<uint8_t>& out) { PutString16(out, m.path); }

Status Decode(std::span<const uint8_t> body, PathReply* m) {
  ByteReader in(body);
  PROTO_TRY(ReadString16(in, "path", &m->path));
  return CheckPath("path", m->path, /*absolute=*/true);
}

// ---- FILE_APPEND, FILE_CLOSE, EVENT_END ----

void Encode(const SizeReply& m, std::vector<uint8_t>& out) { PutU64(out, m.size); }

Status Decode(std::span<const uint8_t> body, SizeReply* m) {
  PROTO_TRY(CheckMinSize("size reply", body.size(), sizeof(uint64_t)));
  ByteReader in(body);
  PROTO_READ(in.ReadU64(&m->size), "size reply");
  return Status::Ok();
}

// ---- STATUS ----

void Encode(const StatusReply& m, std::vector<uint8_t>& out) {
  PutU32(out, m.record_num);
  PutU32(out, m.host_dirs);
  PutU32(out, m.device_dirs);
  PutU32(out, m.exit_dirs);
  PutU32(out, m.clients);
  PutU32(out, 0);  // reserved
  PutU64(out, m.events_begun);
  PutU64(out, m.dirs_aged);
  PutU64(out, m.bytes_written);
  PutU64(out, m.removal_failures);
  PutU64(out, m.requests_refused);
  PutString16(out, m.root);
  // What a decoder filled in for an older daemon is not sent: re-encoding gives the body back.
  if (!m.apparent_sent) return;
  PutU64(out, m.bytes_apparent);
  if (!m.retention.present) return;
  const auto& r = m.retention;
  for (uint64_t v : {r.max_use, r.keep_free, r.fs_free, r.used_host, r.used_device, r.used_exit, r.bytes_freed,
                     r.aged_count, r.aged_max_use, r.aged_keep_free, r.aged_max_age, r.aged_vacuum, r.refused_max_use,
                     r.refused_keep_free, r.refused_rate_limit, r.refused_client_bytes}) {
    PutU64(out, v);
  }
  PutU32(out, r.exit_record_num);
  PutU32(out, r.aging_policy);
  PutU64(out, r.max_age_s);
  if (!m.shares.present) return;
  PutU32(out, static_cast<uint32_t>(m.shares.pools.size()));
  PutU32(out, 0);  // reserved
  for (const StatusReply::Pool& p : m.shares.pools) {
    PutU8(out, p.pool);
    for (int i = 0; i < 3; ++i) PutU8(out, 0);
    PutU32(out, static_cast<uint32_t>(p.uids.size()));
    PutU64(out, p.limit);
    PutU64(out, p.per_uid);
    PutU64(out, p.held);
    for (const auto& [uid, held] : p.uids) {
      PutU32(out, uid);
      PutU32(out, 0);
      PutU64(out, held);
    }
  }
  if (!m.devices.present) return;
  PutU32(out, static_cast<uint32_t>(m.devices.devices.size()));
  PutU32(out, 0);  // reserved
  for (const StatusReply::Device& d : m.devices.devices) {
    PutU32(out, d.device_id);
    PutU32(out, 0);
    for (uint64_t v : {d.events, d.received, d.saved, d.dropped_invalid, d.dropped_daemon, d.reconnects}) PutU64(out, v);
  }
  if (!m.incomplete_sent) return;
  PutU64(out, m.incomplete_dirs);
  if (!m.dumps_sent) return;
  PutU64(out, m.dumps_kept);
  PutU64(out, m.dumps_aged_early);
}

namespace {

// The pools block (atr_status_pool); false if it is cut short or out of bounds, and then
// nothing of it is believed.
bool ReadShares(ByteReader& in, StatusReply::Shares* shares) {
  uint32_t count = 0, reserved = 0;
  // Reserved bytes must be 0: a block that says otherwise is not one this reader knows.
  if (!in.ReadU32(&count) || !in.ReadU32(&reserved) || count > ATR_MAX_POOLS || reserved != 0) return false;
  for (uint32_t i = 0; i < count; ++i) {
    StatusReply::Pool p;
    uint8_t pad[3];
    uint32_t uid_count = 0;
    if (!in.ReadU8(&p.pool) || !in.ReadU8(&pad[0]) || !in.ReadU8(&pad[1]) || !in.ReadU8(&pad[2]) ||
        !in.ReadU32(&uid_count) || !in.ReadU64(&p.limit) || !in.ReadU64(&p.per_uid) || !in.ReadU64(&p.held) ||
        uid_count > ATR_MAX_POOL_UIDS || (pad[0] | pad[1] | pad[2]) != 0) {
      return false;
    }
    for (uint32_t k = 0; k < uid_count; ++k) {
      uint32_t uid = 0, zero = 0;
      uint64_t held = 0;
      if (!in.ReadU32(&uid) || !in.ReadU32(&zero) || !in.ReadU64(&held) || zero != 0) return false;
      p.uids.emplace_back(uid, held);
    }
    shares->pools.push_back(std::move(p));
  }
  return true;
}

// The devices block (atr_status_device); false if it is cut short or out of bounds.
bool ReadDevices(ByteReader& in, StatusReply::Devices* devices) {
  uint32_t count = 0, reserved = 0;
  if (!in.ReadU32(&count) || !in.ReadU32(&reserved) || count > ATR_MAX_STATUS_DEVICES || reserved != 0) return false;
  for (uint32_t i = 0; i < count; ++i) {
    StatusReply::Device d;
    uint32_t zero = 0;
    if (!in.ReadU32(&d.device_id) || !in.ReadU32(&zero) || zero != 0 || d.device_id > ATR_MAX_DEVICE_ID ||
        !in.ReadU64(&d.events) || !in.ReadU64(&d.received) || !in.ReadU64(&d.saved) ||
        !in.ReadU64(&d.dropped_invalid) || !in.ReadU64(&d.dropped_daemon) || !in.ReadU64(&d.reconnects)) {
      return false;
    }
    devices->devices.push_back(d);
  }
  return true;
}

}  // namespace

Status Decode(std::span<const uint8_t> body, StatusReply* m) {
  PROTO_TRY(CheckMinSize("STATUS reply", body.size(), sizeof(atr_status_reply)));
  ByteReader in(body);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadU32(&m->record_num) && in.ReadU32(&m->host_dirs) &&
                 in.ReadU32(&m->device_dirs) && in.ReadU32(&m->exit_dirs) &&
                 in.ReadU32(&m->clients) && in.ReadU32(&reserved) &&
                 in.ReadU64(&m->events_begun) && in.ReadU64(&m->dirs_aged) &&
                 in.ReadU64(&m->bytes_written) && in.ReadU64(&m->removal_failures) &&
                 in.ReadU64(&m->requests_refused),
             "STATUS reply");
  PROTO_TRY(CheckReserved("reserved", reserved));
  PROTO_TRY(ReadString16(in, "root", &m->root));
  // Appended fields are read when there; anything after them is a later version's.
  m->apparent_sent = in.ReadU64(&m->bytes_apparent);
  if (!m->apparent_sent) {
    m->bytes_apparent = m->bytes_written;
  } else {
    auto& r = m->retention;
    r.present = in.ReadU64(&r.max_use) && in.ReadU64(&r.keep_free) && in.ReadU64(&r.fs_free) &&
                in.ReadU64(&r.used_host) && in.ReadU64(&r.used_device) && in.ReadU64(&r.used_exit) &&
                in.ReadU64(&r.bytes_freed) && in.ReadU64(&r.aged_count) && in.ReadU64(&r.aged_max_use) &&
                in.ReadU64(&r.aged_keep_free) && in.ReadU64(&r.aged_max_age) && in.ReadU64(&r.aged_vacuum) &&
                in.ReadU64(&r.refused_max_use) && in.ReadU64(&r.refused_keep_free) &&
                in.ReadU64(&r.refused_rate_limit) && in.ReadU64(&r.refused_client_bytes) &&
                in.ReadU32(&r.exit_record_num) && in.ReadU32(&r.aging_policy) && in.ReadU64(&r.max_age_s);
    if (!r.present) {
      r = {};  // a truncated block is not half believed
    } else {
      m->shares.present = ReadShares(in, &m->shares);
      if (!m->shares.present) {
        m->shares = {};
      } else {
        m->devices.present = ReadDevices(in, &m->devices);
        if (!m->devices.present) {
          m->devices = {};
        } else {
          m->incomplete_sent = in.ReadU64(&m->incomplete_dirs);
          if (!m->incomplete_sent) m->incomplete_dirs = 0;
          m->dumps_sent = m->incomplete_sent && in.ReadU64(&m->dumps_kept) && in.ReadU64(&m->dumps_aged_early);
          if (!m->dumps_sent) m->dumps_kept = m->dumps_aged_early = 0;
        }
      }
    }
  }
  return CheckPath("root", m->root, /*absolute=*/true);
}

// ---- LIST ----

void Encode(const ListReply& m, std::vector<uint8_t>& out) {
  PutU32(out, static_cast<uint32_t>(m.entries.size()));
  PutU32(out, 0);  // reserved
  for (const ListEntry& e : m.entries) {
    PutU64(out, e.seq);
    PutU8(out, e.kind);
    PutU8(out, e.side);
    PutU16(out, 0);  // reserved
    PutU32(out, e.device_id);
    PutI32(out, e.pid);
    PutU32(out, e.uid);
    PutU64(out, e.bytes);
    PutU64(out, e.created_unix_us);
    PutString16(out, e.path);
  }
  // Appended after every entry: an entry cannot grow (see PROTOCOL.md).
  if (!m.apparent_sent) return;
  for (const ListEntry& e : m.entries) PutU64(out, e.apparent_bytes);
  // Then each entry's program, "" where unknown (later still 1.1).
  if (!m.comm_sent) return;
  for (const ListEntry& e : m.entries) PutString16(out, e.comm);
  // Then each entry's flags (later still 1.1).
  if (!m.flags_sent) return;
  for (const ListEntry& e : m.entries) PutU32(out, e.flags);
  // Then each entry's labels: job, rank, world size (later still 1.1).
  if (!m.labels_sent) return;
  for (const ListEntry& e : m.entries) {
    PutString16(out, e.labels.job);
    PutString16(out, e.labels.rank);
    PutString16(out, e.labels.world_size);
  }
}

namespace {

Status DecodeListEntry(ByteReader& in, const std::string& field, ListEntry* e) {
  uint16_t reserved = 0;
  if (!(in.ReadU64(&e->seq) && in.ReadU8(&e->kind) && in.ReadU8(&e->side) &&
        in.ReadU16(&reserved) && in.ReadU32(&e->device_id) && in.ReadI32(&e->pid) &&
        in.ReadU32(&e->uid) && in.ReadU64(&e->bytes) && in.ReadU64(&e->created_unix_us))) {
    return Error(EBADMSG, field, "truncated");
  }
  PROTO_TRY(CheckRange(field + ".kind", e->kind, ATR_EVENT_SCHEDULE, ATR_EVENT_EXIT));
  PROTO_TRY(CheckRange(field + ".side", e->side, ATR_SIDE_HOST, ATR_SIDE_DEVICE));
  PROTO_TRY(CheckReserved(field + ".reserved", reserved));
  PROTO_TRY(ReadString16(in, field + ".path", &e->path));
  return CheckPath(field + ".path", e->path, /*absolute=*/false);
}

// u32 count + u32 reserved, shared by LIST and VACUUM replies.
Status ReadCount(ByteReader& in, std::string_view message, uint32_t* count) {
  uint32_t reserved = 0;
  if (!(in.ReadU32(count) && in.ReadU32(&reserved))) {
    return Error(EBADMSG, message, "truncated");
  }
  return CheckReserved("reserved", reserved);
}

}  // namespace

Status Decode(std::span<const uint8_t> body, ListReply* m) {
  ByteReader in(body);
  uint32_t count = 0;
  PROTO_TRY(ReadCount(in, "LIST reply", &count));
  PROTO_TRY(CheckRange("count", count, 0, kMaxListEntries));
  PROTO_TRY(CheckCountFits(in, count, sizeof(atr_list_entry) + 2, "entries"));
  m->entries.clear();
  m->entries.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    PROTO_TRY(DecodeListEntry(in, "entries[" + std::to_string(i) + "]", &m->entries[i]));
  }
  // The apparent sizes, all or none: a body without them comes from an older daemon.
  const bool apparent = in.remaining() / 8 >= count;
  m->apparent_sent = apparent;
  for (ListEntry& e : m->entries) {
    if (!apparent || !in.ReadU64(&e.apparent_bytes)) e.apparent_bytes = e.bytes;
  }
  // The programs, all or none: a body without them (or with a bad one) comes from an older
  // daemon, or is not believed; every entry is then "" (unknown).
  m->comm_sent = apparent && count > 0;
  for (size_t i = 0; i < m->entries.size() && m->comm_sent; ++i) {
    std::string& comm = m->entries[i].comm;
    m->comm_sent = ReadString16(in, "comm", &comm).ok() && (comm.empty() || CheckName("comm", comm, ATR_MAX_PROGRAM_NAME).ok());
  }
  if (!m->comm_sent) {
    for (ListEntry& e : m->entries) e.comm.clear();
  }
  // The flags, all or none, after the programs: a body without them comes from an older daemon.
  m->flags_sent = m->comm_sent && in.remaining() / 4 >= count;
  for (ListEntry& e : m->entries) {
    if (!m->flags_sent || !in.ReadU32(&e.flags)) e.flags = 0;
  }
  // The labels, all or none, after the flags: a body without them comes from an older
  // daemon, and one with a label that is not one is not believed.
  m->labels_sent = m->flags_sent && count > 0;
  for (size_t i = 0; i < m->entries.size() && m->labels_sent; ++i) {
    Labels& l = m->entries[i].labels;
    m->labels_sent = ReadString16(in, "job", &l.job).ok() && ReadString16(in, "rank", &l.rank).ok() &&
                     ReadString16(in, "world_size", &l.world_size).ok() &&
                     CheckLabel(LabelKind::kJob, l.job).empty() && CheckLabel(LabelKind::kRank, l.rank).empty() &&
                     CheckLabel(LabelKind::kWorldSize, l.world_size).empty();
  }
  if (!m->labels_sent) {
    for (ListEntry& e : m->entries) e.labels = Labels{};
  }
  return Status::Ok();
}

// ---- VACUUM ----

void Encode(const VacuumReply& m, std::vector<uint8_t>& out) {
  PutU32(out, static_cast<uint32_t>(m.paths.size()));
  PutU32(out, m.omitted);
  for (const std::string& p : m.paths) PutString16(out, p);
}

namespace {

// `count` relative paths (u16 length + bytes each), for VACUUM and VACUUM_BY replies.
Status ReadPaths(ByteReader& in, uint32_t count, std::vector<std::string>* paths) {
  PROTO_TRY(CheckRange("count", count, 0, ATR_MAX_VACUUM_PATHS));
  PROTO_TRY(CheckCountFits(in, count, 2, "paths"));  // each path is at least its length
  paths->clear();
  paths->resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const std::string field = "paths[" + std::to_string(i) + "]";
    PROTO_TRY(ReadString16(in, field, &(*paths)[i]));
    PROTO_TRY(CheckPath(field, (*paths)[i], /*absolute=*/false));
  }
  return Status::Ok();
}

}  // namespace

Status Decode(std::span<const uint8_t> body, VacuumReply* m) {
  ByteReader in(body);
  uint32_t count = 0;
  if (!(in.ReadU32(&count) && in.ReadU32(&m->omitted))) return Error(EBADMSG, "VACUUM reply", "truncated");
  return ReadPaths(in, count, &m->paths);
}

// ---- VACUUM_BY ----

void Encode(const VacuumByReply& m, std::vector<uint8_t>& out) {
  PutU32(out, static_cast<uint32_t>(m.paths.size()));
  PutU32(out, m.omitted);
  PutU64(out, m.bytes);
  for (const std::string& p : m.paths) PutString16(out, p);
}

Status Decode(std::span<const uint8_t> body, VacuumByReply* m) {
  ByteReader in(body);
  uint32_t count = 0;
  if (!(in.ReadU32(&count) && in.ReadU32(&m->omitted) && in.ReadU64(&m->bytes))) {
    return Error(EBADMSG, "VACUUM_BY reply", "truncated");
  }
  return ReadPaths(in, count, &m->paths);
}

// ---- CRASH (ATR_FEATURE_CRASH_PATH) ----

void Encode(const CrashReply& m, std::vector<uint8_t>& out) { PutString16(out, m.report); }

Status Decode(std::span<const uint8_t> body, CrashReply* m) {
  ByteReader in(body);
  PROTO_TRY(ReadString16(in, "report", &m->report));
  return m->report.empty() ? Status::Ok() : CheckPath("report", m->report, /*absolute=*/true);
}

}  // namespace atraced::proto
