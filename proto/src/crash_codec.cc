// CRASH, DUMP and STACK_DUMP (1.1, behind ATR_FEATURE_CRASH and ATR_FEATURE_STACK_DUMP): the messages a libascend_trace signal
// handler sends. Same rules as codec.cc: exact size, reserved zero, so a decoded message re-encodes
// to the bytes it came from. The handler itself cannot use this encoder (it may not
// allocate): it builds the same bytes by hand, and a test compares the two.
#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckExactSize;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;

void Encode(const Crash& m, std::vector<uint8_t>& out) {
  PutI32(out, m.signo);
  PutI32(out, m.code);
  PutI32(out, m.tid);
  PutU32(out, 0);  // reserved
  PutU64(out, m.fault_addr);
}

Status Decode(std::span<const uint8_t> payload, Crash* m) {
  PROTO_TRY(CheckExactSize("CRASH", payload.size(), sizeof(atr_crash)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadI32(&m->signo) && in.ReadI32(&m->code) && in.ReadI32(&m->tid) && in.ReadU32(&reserved) &&
                 in.ReadU64(&m->fault_addr),
             "CRASH");
  PROTO_TRY(CheckRange("signo", m->signo, 1, ATR_MAX_SIGNO));
  PROTO_TRY(CheckRange("tid", m->tid, 1, INT32_MAX));
  PROTO_TRY(CheckReserved("reserved", reserved));
  return Status::Ok();
}

void Encode(const Dump& m, std::vector<uint8_t>& out) {
  PutI32(out, m.signo);
  PutI32(out, m.tid);
}

Status Decode(std::span<const uint8_t> payload, Dump* m) {
  PROTO_TRY(CheckExactSize("DUMP", payload.size(), sizeof(atr_dump)));
  ByteReader in(payload);
  PROTO_READ(in.ReadI32(&m->signo) && in.ReadI32(&m->tid), "DUMP");
  PROTO_TRY(CheckRange("signo", m->signo, 1, ATR_MAX_SIGNO));
  PROTO_TRY(CheckRange("tid", m->tid, 1, INT32_MAX));
  return Status::Ok();
}

void Encode(const StackDump& m, std::vector<uint8_t>& out) {
  PutI32(out, m.signo);
  PutI32(out, m.tid);
  PutU32(out, m.flags);
  PutU32(out, 0);  // reserved
}

Status Decode(std::span<const uint8_t> payload, StackDump* m) {
  PROTO_TRY(CheckExactSize("STACK_DUMP", payload.size(), sizeof(atr_stack_dump)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadI32(&m->signo) && in.ReadI32(&m->tid) && in.ReadU32(&m->flags) && in.ReadU32(&reserved),
             "STACK_DUMP");
  PROTO_TRY(CheckRange("signo", m->signo, 1, ATR_MAX_SIGNO));
  PROTO_TRY(CheckRange("tid", m->tid, 1, INT32_MAX));
  if ((m->flags & ~ATR_STACK_DUMP_KNOWN_FLAGS) != 0) {
    return Error(EINVAL, "flags", "unknown bits " + std::to_string(m->flags));
  }
  PROTO_TRY(CheckReserved("reserved", reserved));
  return Status::Ok();
}

}  // namespace atraced::proto
