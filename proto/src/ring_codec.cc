// 1.1 request payloads behind ATR_FEATURE_MEMFD: RING_REGISTER, RING_REPORT, RING_SAVE_ALL,
// GOODBYE (RING_RELEASE is an IdRequest). Same rules as codec.cc: exact sizes, reserved
// fields zero, and only one encoding of each message is accepted, so a decoded message
// re-encodes to the bytes it came from.
#include <string>

#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "atraced/proto/ledger_layout.h"
#include "atraced/proto/ring_layout.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckExactSize;
using internal::CheckMinSize;
using internal::CheckName;
using internal::CheckNonZero;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;

namespace {

bool IsFieldType(uint8_t t) { return t <= 8 || (t >= 100 && t <= 108); }  // CANN's TRACE_STRUCT_*_TYPE_*

// Struct and field names end up NUL-padded in a 32-byte .bin field, never in a path.
Status ReadLabel(ByteReader& in, uint8_t len, const std::string& field, std::string* out) {
  std::span<const uint8_t> raw;
  PROTO_READ(in.ReadBytes(len, &raw), "RING_REGISTER");
  out->assign(raw.begin(), raw.end());
  if (len > ATR_MAX_STRUCT_NAME) {
    return Error(ENAMETOOLONG, field, std::to_string(len) + " bytes, limit " + std::to_string(ATR_MAX_STRUCT_NAME));
  }
  if (out->find('\0') != std::string::npos) return Error(EINVAL, field, "contains NUL");
  return Status::Ok();
}

Status DecodeStruct(ByteReader& in, int previous_type, RingStructEntry* e) {
  uint8_t name_len = 0;
  uint16_t field_count = 0;
  if (in.remaining() < sizeof(atr_struct_entry_head)) {
    return Error(EBADMSG, "struct entry", "truncated");
  }
  PROTO_READ(in.ReadU8(&e->buffer_type) && in.ReadU8(&name_len) && in.ReadU16(&field_count), "struct entry");
  const std::string where = "struct " + std::to_string(e->buffer_type);
  PROTO_TRY(CheckRange(where + " buffer_type", e->buffer_type, 0, ATR_MAX_STRUCT_ENTRIES - 1));
  if (static_cast<int>(e->buffer_type) <= previous_type) {
    return Error(EINVAL, where + " buffer_type", "not in ascending order");
  }
  PROTO_TRY(CheckRange(where + " field_count", field_count, 1, ATR_MAX_STRUCT_FIELDS));
  if (in.remaining() < name_len) return Error(EBADMSG, where + " name", "truncated");
  PROTO_TRY(ReadLabel(in, name_len, where + " name", &e->name));
  e->fields.resize(field_count);
  for (uint16_t i = 0; i < field_count; ++i) {
    RingStructField& f = e->fields[i];
    const std::string fwhere = where + " field " + std::to_string(i);
    uint8_t flen = 0, reserved = 0;
    if (in.remaining() < sizeof(atr_struct_field_head)) return Error(EBADMSG, fwhere, "truncated");
    PROTO_READ(in.ReadU8(&f.type) && in.ReadU8(&f.mode) && in.ReadU16(&f.length) && in.ReadU8(&flen) &&
                   in.ReadU8(&reserved),
               "struct field");
    if (!IsFieldType(f.type)) return Error(EINVAL, fwhere + " type", std::to_string(f.type) + " unknown");
    PROTO_TRY(CheckRange(fwhere + " mode", f.mode, 0, 3));
    PROTO_TRY(CheckReserved(fwhere + " reserved", reserved));
    if (in.remaining() < flen) return Error(EBADMSG, fwhere + " name", "truncated");
    PROTO_TRY(ReadLabel(in, flen, fwhere + " name", &f.name));
  }
  return Status::Ok();
}

}  // namespace

// ---- RING_REGISTER ----

void Encode(const RingRegister& m, std::vector<uint8_t>& out) {
  PutU32(out, m.object_id);
  PutU8(out, m.tracer_type);
  PutU8(out, m.flags);
  PutU8(out, static_cast<uint8_t>(m.name.size()));
  PutU8(out, static_cast<uint8_t>(m.structs.size()));
  PutU32(out, m.msg_num);
  PutU32(out, m.msg_size);
  PutU32(out, m.ring_bytes);
  PutI32(out, m.utc_offset_s);
  PutBytes(out, m.name);
  for (const RingStructEntry& e : m.structs) {
    PutU8(out, e.buffer_type);
    PutU8(out, static_cast<uint8_t>(e.name.size()));
    PutU16(out, static_cast<uint16_t>(e.fields.size()));
    PutBytes(out, e.name);
    for (const RingStructField& f : e.fields) {
      PutU8(out, f.type);
      PutU8(out, f.mode);
      PutU16(out, f.length);
      PutU8(out, static_cast<uint8_t>(f.name.size()));
      PutU8(out, 0);  // reserved
      PutBytes(out, f.name);
    }
  }
}

// The rest of a RING_REGISTER with ATR_RING_LEDGER: a collective ledger (ledger_layout.h),
// whose geometry is the ledger's, not CANN's.
static Status DecodeLedgerRegister(ByteReader& in, uint8_t name_len, uint8_t struct_count, RingRegister* m) {
  if (m->flags & (ATR_RING_NO_LOCK | ATR_RING_COUNTER)) {
    return Error(EINVAL, "flags", "ATR_RING_LEDGER takes neither ATR_RING_NO_LOCK nor ATR_RING_COUNTER");
  }
  if (m->msg_num == 0 || (m->msg_num & (m->msg_num - 1)) != 0 || m->msg_num > ATR_LEDGER_MAX_RECORDS) {
    return Error(EINVAL, "msg_num", std::to_string(m->msg_num) + " is not a power of two in 1..1024 (ledger records)");
  }
  PROTO_TRY(CheckRange("msg_size", m->msg_size, ATR_LEDGER_RECORD_SIZE, ATR_LEDGER_RECORD_SIZE));
  PROTO_TRY(CheckRange("ring_bytes", m->ring_bytes, static_cast<int64_t>(ATR_LEDGER_BYTES(m->msg_num)), ATR_RING_MAX_BYTES));
  PROTO_TRY(CheckRange("utc_offset_s", m->utc_offset_s, -ATR_MAX_UTC_OFFSET, ATR_MAX_UTC_OFFSET));
  PROTO_TRY(CheckRange("struct_count", struct_count, 0, 0));
  std::span<const uint8_t> raw;
  if (!in.ReadBytes(name_len, &raw)) return Error(EBADMSG, "name_len", "runs past the payload");
  m->name.assign(raw.begin(), raw.end());
  PROTO_TRY(CheckName("object name", m->name, ATR_MAX_OBJECT_NAME));
  if (in.remaining() != 0) return Error(EBADMSG, "RING_REGISTER", std::to_string(in.remaining()) + " bytes after the name");
  return Status::Ok();
}

Status Decode(std::span<const uint8_t> payload, RingRegister* m) {
  PROTO_TRY(CheckMinSize("RING_REGISTER", payload.size(), sizeof(atr_ring_register)));
  ByteReader in(payload);
  uint8_t name_len = 0, struct_count = 0;
  PROTO_READ(in.ReadU32(&m->object_id) && in.ReadU8(&m->tracer_type) && in.ReadU8(&m->flags) &&
                 in.ReadU8(&name_len) && in.ReadU8(&struct_count) && in.ReadU32(&m->msg_num) &&
                 in.ReadU32(&m->msg_size) && in.ReadU32(&m->ring_bytes) && in.ReadI32(&m->utc_offset_s),
             "RING_REGISTER");
  PROTO_TRY(CheckNonZero("object_id", m->object_id));
  PROTO_TRY(CheckRange("tracer_type", m->tracer_type, 0, 0));
  if ((m->flags & ~ATR_RING_KNOWN_REGISTER_FLAGS) != 0) {
    return Error(EINVAL, "flags", "unknown bits " + std::to_string(m->flags));
  }
  if (m->flags & ATR_RING_LEDGER) return DecodeLedgerRegister(in, name_len, struct_count, m);
  if (m->msg_num == 0 || (m->msg_num & (m->msg_num - 1)) != 0 || m->msg_num > ATR_RING_MAX_MSG_NUM) {
    return Error(EINVAL, "msg_num", std::to_string(m->msg_num) + " is not a power of two in 1..1024");
  }
  PROTO_TRY(CheckRange("msg_size", m->msg_size, ATR_RING_MIN_MSG_SIZE, ATR_RING_MAX_MSG_SIZE));
  if (static_cast<uint64_t>(m->msg_size + ATR_RING_CANN_SLOT_HEAD) * m->msg_num > ATR_RING_MAX_SPACE) {
    return Error(EINVAL, "msg_num", "(msg_size + 16) * msg_num exceeds 131072");
  }
  PROTO_TRY(CheckRange("ring_bytes", m->ring_bytes, static_cast<int64_t>(ATR_RING_BYTES(m->msg_num, m->msg_size)),
                       ATR_RING_MAX_BYTES));
  PROTO_TRY(CheckRange("utc_offset_s", m->utc_offset_s, -ATR_MAX_UTC_OFFSET, ATR_MAX_UTC_OFFSET));
  PROTO_TRY(CheckRange("struct_count", struct_count, 0, ATR_MAX_STRUCT_ENTRIES));
  std::span<const uint8_t> raw;
  if (!in.ReadBytes(name_len, &raw)) return Error(EBADMSG, "name_len", "runs past the payload");
  m->name.assign(raw.begin(), raw.end());
  PROTO_TRY(CheckName("object name", m->name, ATR_MAX_OBJECT_NAME));
  m->structs.resize(struct_count);
  int previous = -1;
  for (RingStructEntry& e : m->structs) {
    PROTO_TRY(DecodeStruct(in, previous, &e));
    previous = e.buffer_type;
  }
  if (in.remaining() != 0) {
    return Error(EBADMSG, "RING_REGISTER", std::to_string(in.remaining()) + " bytes after the last struct");
  }
  return Status::Ok();
}

// ---- RING_REPORT ----

void Encode(const RingReport& m, std::vector<uint8_t>& out) {
  PutU8(out, m.wait ? 1 : 0);
  PutZeros(out, 3);  // reserved
  PutU32(out, static_cast<uint32_t>(m.object_ids.size()));
  for (uint32_t id : m.object_ids) PutU32(out, id);
}

Status Decode(std::span<const uint8_t> payload, RingReport* m) {
  PROTO_TRY(CheckMinSize("RING_REPORT", payload.size(), sizeof(atr_ring_report)));
  ByteReader in(payload);
  uint8_t wait = 0, r0 = 0, r1 = 0, r2 = 0;
  uint32_t count = 0;
  PROTO_READ(in.ReadU8(&wait) && in.ReadU8(&r0) && in.ReadU8(&r1) && in.ReadU8(&r2) && in.ReadU32(&count),
             "RING_REPORT");
  PROTO_TRY(CheckRange("wait", wait, 0, 1));
  PROTO_TRY(CheckReserved("reserved", r0 | r1 | r2));
  PROTO_TRY(CheckRange("count", count, 1, ATR_MAX_REPORT_OBJECTS));
  PROTO_TRY(CheckExactSize("RING_REPORT", payload.size(), sizeof(atr_ring_report) + 4u * count));
  m->wait = wait != 0;
  m->object_ids.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    PROTO_READ(in.ReadU32(&m->object_ids[i]), "RING_REPORT");
    PROTO_TRY(CheckNonZero("object_id", m->object_ids[i]));
    for (uint32_t j = 0; j < i; ++j) {
      if (m->object_ids[j] == m->object_ids[i]) {
        return Error(EINVAL, "object_id", std::to_string(m->object_ids[i]) + " listed twice");
      }
    }
  }
  return Status::Ok();
}

// ---- RING_SAVE_ALL ----

void Encode(const RingSaveAll& m, std::vector<uint8_t>& out) {
  PutU8(out, m.wait ? 1 : 0);
  PutU8(out, m.tracer_type);
  PutZeros(out, 6);  // reserved
}

Status Decode(std::span<const uint8_t> payload, RingSaveAll* m) {
  PROTO_TRY(CheckExactSize("RING_SAVE_ALL", payload.size(), sizeof(atr_ring_save_all)));
  ByteReader in(payload);
  uint8_t wait = 0;
  PROTO_READ(in.ReadU8(&wait) && in.ReadU8(&m->tracer_type), "RING_SAVE_ALL");
  PROTO_TRY(CheckRange("wait", wait, 0, 1));
  PROTO_TRY(CheckRange("tracer_type", m->tracer_type, 0, 0));
  for (uint8_t b : in.rest()) PROTO_TRY(CheckReserved("reserved", b));
  m->wait = wait != 0;
  return Status::Ok();
}

// ---- GOODBYE ----

void Encode(const Goodbye&, std::vector<uint8_t>&) {}

Status Decode(std::span<const uint8_t> payload, Goodbye*) {
  return CheckExactSize("GOODBYE", payload.size(), 0);
}

}  // namespace atraced::proto
