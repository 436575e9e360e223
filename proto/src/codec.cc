// Frame header and request payloads. Reply payloads live in reply_codec.cc.
#include <algorithm>
#include <cassert>

#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckExactSize;
using internal::CheckMinSize;
using internal::CheckName;
using internal::CheckNonZero;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;
using internal::PutTime;
using internal::ReadTime;

namespace {

// One allocation for the whole frame, but keep growth geometric: `out` is often a batch of
// many frames, and reserving exactly each time would copy it once per frame.
void PutFrameHeader(std::vector<uint8_t>& out, uint16_t opcode, uint16_t flags, uint32_t request_id,
                    size_t payload_size) {
  assert(payload_size <= ATR_MAX_PAYLOAD);
  const size_t needed = out.size() + ATR_FRAME_HEADER_SIZE + payload_size;
  if (needed > out.capacity()) out.reserve(std::max(needed, 2 * out.capacity()));
  PutU32(out, ATR_MAGIC);
  PutU32(out, static_cast<uint32_t>(payload_size));
  PutU16(out, opcode);
  PutU16(out, flags);
  PutU32(out, request_id);
}

}  // namespace

void AppendFrame(std::vector<uint8_t>& out, uint16_t opcode, uint16_t flags, uint32_t request_id,
                 std::span<const uint8_t> payload) {
  PutFrameHeader(out, opcode, flags, request_id, payload.size());
  PutBytes(out, payload);
}

void AppendFrame(std::vector<uint8_t>& out, uint32_t request_id, const FileAppend& m) {
  PutFrameHeader(out, ATR_OP_FILE_APPEND, 0, request_id, sizeof(atr_file_append) + m.data.size());
  Encode(m, out);
}

// ---- HELLO ----

void Encode(const Hello& m, std::vector<uint8_t>& out) {
  PutU16(out, m.major);
  PutU16(out, m.minor);
  PutU32(out, 0);  // reserved
  PutU64(out, m.features);
}

Status Decode(std::span<const uint8_t> payload, Hello* m) {
  PROTO_TRY(CheckExactSize("HELLO", payload.size(), sizeof(atr_hello)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadU16(&m->major) && in.ReadU16(&m->minor) && in.ReadU32(&reserved) &&
               in.ReadU64(&m->features),
           "HELLO");
  PROTO_TRY(CheckReserved("reserved", reserved));
  return Status::Ok();
}

// ---- EVENT_BEGIN ----

void Encode(const EventBegin& m, std::vector<uint8_t>& out) {
  PutU32(out, m.event_id);
  PutU8(out, m.kind);
  PutU8(out, m.side);
  PutU16(out, 0);  // reserved
  PutU32(out, m.device_id);
  PutI32(out, m.host_pid);
  PutTime(out, m.time);
}

Status Decode(std::span<const uint8_t> payload, EventBegin* m) {
  PROTO_TRY(CheckExactSize("EVENT_BEGIN", payload.size(), sizeof(atr_event_begin)));
  ByteReader in(payload);
  uint16_t reserved = 0;
  PROTO_READ(in.ReadU32(&m->event_id) && in.ReadU8(&m->kind) && in.ReadU8(&m->side) &&
               in.ReadU16(&reserved) && in.ReadU32(&m->device_id) && in.ReadI32(&m->host_pid),
           "EVENT_BEGIN");
  PROTO_TRY(ReadTime(in, &m->time));

  PROTO_TRY(CheckNonZero("event_id", m->event_id));
  PROTO_TRY(CheckRange("kind", m->kind, ATR_EVENT_SCHEDULE, ATR_EVENT_EXIT));
  PROTO_TRY(CheckRange("side", m->side, ATR_SIDE_HOST, ATR_SIDE_DEVICE));
  PROTO_TRY(CheckReserved("reserved", reserved));
  if (m->side == ATR_SIDE_DEVICE) {
    PROTO_TRY(CheckRange("device_id", m->device_id, 0, ATR_MAX_DEVICE_ID));
  } else {
    if (m->device_id != 0) return Error(EINVAL, "device_id", "must be 0 for a host event");
    // A host event's directory time is the daemon's clock; only a device keeps its own.
    if (!m->time.empty()) return Error(EINVAL, "time", "must be all NUL for a host event");
  }
  if (m->host_pid < 0) return Error(EINVAL, "host_pid", "negative");
  return Status::Ok();
}

// ---- FILE_OPEN ----

void Encode(const FileOpen& m, std::vector<uint8_t>& out) {
  const std::string_view name = std::string_view(m.name).substr(0, UINT16_MAX);
  PutU32(out, m.event_id);
  PutU32(out, m.file_id);
  PutU8(out, m.form);
  PutU8(out, m.suffix);
  PutU16(out, static_cast<uint16_t>(name.size()));
  PutU32(out, m.device_id);
  PutI32(out, m.signo);
  PutI32(out, m.tid);
  PutTime(out, m.time);
  PutBytes(out, name);
}

Status Decode(std::span<const uint8_t> payload, FileOpen* m) {
  PROTO_TRY(CheckMinSize("FILE_OPEN", payload.size(), sizeof(atr_file_open)));
  ByteReader in(payload);
  uint16_t name_len = 0;
  PROTO_READ(in.ReadU32(&m->event_id) && in.ReadU32(&m->file_id) && in.ReadU8(&m->form) &&
               in.ReadU8(&m->suffix) && in.ReadU16(&name_len) && in.ReadU32(&m->device_id) &&
               in.ReadI32(&m->signo) && in.ReadI32(&m->tid),
           "FILE_OPEN");
  PROTO_TRY(ReadTime(in, &m->time));
  // The name is the only variable part, so its length must account for every byte left:
  // anything else means the sender's framing and ours disagree.
  if (name_len != in.remaining()) {
    return Error(EBADMSG, "name_len",
                 std::to_string(name_len) + " but " + std::to_string(in.remaining()) +
                     " bytes follow the header");
  }
  std::span<const uint8_t> raw = in.rest();
  m->name.assign(raw.begin(), raw.end());

  PROTO_TRY(CheckNonZero("event_id", m->event_id));
  PROTO_TRY(CheckNonZero("file_id", m->file_id));
  PROTO_TRY(CheckRange("form", m->form, ATR_FILE_OBJECT, ATR_FILE_STACKCORE));
  PROTO_TRY(CheckRange("suffix", m->suffix, ATR_SUFFIX_TXT, ATR_SUFFIX_BIN));
  if (m->form != ATR_FILE_OBJECT && m->suffix != ATR_SUFFIX_TXT) {
    return Error(EINVAL, "suffix", "must be 0 unless form is OBJECT");
  }
  if (m->form == ATR_FILE_TS) {
    PROTO_TRY(CheckRange("device_id", m->device_id, 0, ATR_MAX_DEVICE_ID));
  } else if (m->device_id != 0) {
    return Error(EINVAL, "device_id", "must be 0 unless form is TS");
  }
  if (m->form == ATR_FILE_STACKCORE) {
    if (m->signo < 0) return Error(EINVAL, "signo", "negative");
    if (m->tid < 0) return Error(EINVAL, "tid", "negative");
  } else {
    if (m->signo != 0) return Error(EINVAL, "signo", "must be 0 unless form is STACKCORE");
    if (m->tid != 0) return Error(EINVAL, "tid", "must be 0 unless form is STACKCORE");
    if (!m->time.empty()) {
      return Error(EINVAL, "time", "must be all NUL unless form is STACKCORE");
    }
  }
  switch (m->form) {
    case ATR_FILE_OBJECT:
      return CheckName("object name", m->name, ATR_MAX_OBJECT_NAME);
    case ATR_FILE_STACKCORE:
      // Empty means "the peer's own program": the daemon takes it from the kernel, which is
      // what an application reporting its own crash wants and cannot get wrong.
      if (m->name.empty()) return Status::Ok();
      return CheckName("program name", m->name, ATR_MAX_PROGRAM_NAME);
    default:  // ATR_FILE_TS: the file is named by device_id alone.
      if (!m->name.empty()) return Error(EINVAL, "name_len", "must be 0 for form TS");
      return Status::Ok();
  }
}

// ---- FILE_APPEND ----

void Encode(const FileAppend& m, std::vector<uint8_t>& out) {
  PutU32(out, m.file_id);
  PutU32(out, 0);  // reserved
  PutBytes(out, m.data);
}

Status Decode(std::span<const uint8_t> payload, FileAppend* m) {
  PROTO_TRY(CheckMinSize("FILE_APPEND", payload.size(), sizeof(atr_file_append)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadU32(&m->file_id) && in.ReadU32(&reserved), "FILE_APPEND");
  m->data = in.rest();
  PROTO_TRY(CheckNonZero("file_id", m->file_id));
  PROTO_TRY(CheckReserved("reserved", reserved));
  // Unreachable through a FrameDecoder with the default limit; a caller with a larger
  // limit, or one decoding a payload from elsewhere, still gets the rule enforced.
  if (m->data.size() > ATR_MAX_APPEND) {
    return Error(EMSGSIZE, "data",
                 std::to_string(m->data.size()) + " bytes, limit " +
                     std::to_string(ATR_MAX_APPEND));
  }
  return Status::Ok();
}

// ---- FILE_GET_FD, FILE_CLOSE, EVENT_END ----

void Encode(const IdRequest& m, std::vector<uint8_t>& out) {
  PutU32(out, m.id);
  PutU32(out, 0);  // reserved
}

Status Decode(std::span<const uint8_t> payload, IdRequest* m) {
  PROTO_TRY(CheckExactSize("id request", payload.size(), sizeof(atr_id_request)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadU32(&m->id) && in.ReadU32(&reserved), "id request");
  PROTO_TRY(CheckNonZero("id", m->id));
  PROTO_TRY(CheckReserved("reserved", reserved));
  return Status::Ok();
}

// ---- STATUS ----

void Encode(const StatusRequest&, std::vector<uint8_t>&) {}

Status Decode(std::span<const uint8_t> payload, StatusRequest*) {
  return CheckExactSize("STATUS", payload.size(), 0);
}

// ---- LIST ----

void Encode(const ListRequest& m, std::vector<uint8_t>& out) {
  PutU64(out, m.after_seq);
  PutU32(out, m.max_entries);
  PutU32(out, 0);  // reserved
}

Status Decode(std::span<const uint8_t> payload, ListRequest* m) {
  PROTO_TRY(CheckExactSize("LIST", payload.size(), sizeof(atr_list_request)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadU64(&m->after_seq) && in.ReadU32(&m->max_entries) && in.ReadU32(&reserved),
           "LIST");
  PROTO_TRY(CheckRange("max_entries", m->max_entries, 1, kMaxListEntries));
  PROTO_TRY(CheckReserved("reserved", reserved));
  return Status::Ok();
}

// ---- VACUUM ----

void Encode(const VacuumRequest& m, std::vector<uint8_t>& out) {
  PutU8(out, m.dry_run ? 1 : 0);
  PutZeros(out, 7);  // reserved
}

Status Decode(std::span<const uint8_t> payload, VacuumRequest* m) {
  PROTO_TRY(CheckExactSize("VACUUM", payload.size(), sizeof(atr_vacuum_request)));
  ByteReader in(payload);
  uint8_t dry_run = 0;
  PROTO_READ(in.ReadU8(&dry_run), "VACUUM");
  PROTO_TRY(CheckRange("dry_run", dry_run, 0, 1));
  for (uint8_t b : in.rest()) PROTO_TRY(CheckReserved("reserved", b));
  m->dry_run = dry_run != 0;
  return Status::Ok();
}

void Encode(const VacuumBy& m, std::vector<uint8_t>& out) {
  PutU8(out, m.dry_run ? 1 : 0);
  PutU8(out, 0);  // reserved0
  PutU16(out, m.verbs);
  PutU32(out, m.keep);
  PutU64(out, m.older_than_us);
  PutU64(out, m.max_use);
  PutU64(out, 0);  // reserved
}

Status Decode(std::span<const uint8_t> payload, VacuumBy* m) {
  PROTO_TRY(CheckExactSize("VACUUM_BY", payload.size(), sizeof(atr_vacuum_by_request)));
  ByteReader in(payload);
  uint8_t dry_run = 0, reserved0 = 0;
  uint64_t reserved = 0;
  PROTO_READ(in.ReadU8(&dry_run) && in.ReadU8(&reserved0) && in.ReadU16(&m->verbs) && in.ReadU32(&m->keep) &&
                 in.ReadU64(&m->older_than_us) && in.ReadU64(&m->max_use) && in.ReadU64(&reserved),
             "VACUUM_BY");
  PROTO_TRY(CheckRange("dry_run", dry_run, 0, 1));
  PROTO_TRY(CheckReserved("reserved0", reserved0));
  PROTO_TRY(CheckReserved("reserved", reserved));
  if (m->verbs == 0) return Error(EINVAL, "verbs", "none given: name at least one of older-than, max-use, keep");
  if ((m->verbs & ~ATR_VACUUM_KNOWN_VERBS) != 0) return Error(EINVAL, "verbs", "unknown bits " + std::to_string(m->verbs));
  // A value without its verb is a client's mistake, not a default: refused.
  auto value = [m](uint16_t verb, std::string_view field, uint64_t v, uint64_t least) -> Status {
    if (m->verbs & verb) {
      if (v < least) return Error(EINVAL, field, "must be at least " + std::to_string(least));
    } else if (v != 0) {
      return Error(EINVAL, field, "set without its verb");
    }
    return Status::Ok();
  };
  PROTO_TRY(value(ATR_VACUUM_KEEP, "keep", m->keep, 1));
  PROTO_TRY(value(ATR_VACUUM_OLDER_THAN, "older_than_us", m->older_than_us, 1));
  PROTO_TRY(value(ATR_VACUUM_MAX_USE, "max_use", m->max_use, 0));
  m->dry_run = dry_run != 0;
  return Status::Ok();
}

}  // namespace atraced::proto
