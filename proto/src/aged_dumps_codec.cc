// AGED_DUMPS (1.1, behind ATR_FEATURE_AGED_DUMPS): the reply, the dump directories aging
// removed. Its request is LIST_LIVE's (list_live_codec.cc). Same rules as codec.cc: a reply
// ignores bytes after what it knows; every field is checked (the path as LIST's, the labels by
// CheckLabel, the reason and flags by their known values), so what `atracectl export` writes
// into bundle.jsonl from it is the daemon's form.
#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckPath;
using internal::CheckCountFits;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;
using internal::PutString16;
using internal::ReadLabels16;
using internal::ReadString16;

void Encode(const AgedDumpsReply& m, std::vector<uint8_t>& out) {
  PutU32(out, static_cast<uint32_t>(m.entries.size()));
  PutU32(out, m.omitted);
  for (const AgedEntry& e : m.entries) {
    PutU64(out, e.aged_unix_us);
    PutU32(out, e.uid);
    PutU8(out, e.reason);
    PutU8(out, e.flags);
    PutZeros(out, 2);
    PutString16(out, e.path);
    PutString16(out, e.labels.job);
    PutString16(out, e.labels.rank);
    PutString16(out, e.labels.world_size);
  }
}

Status Decode(std::span<const uint8_t> body, AgedDumpsReply* m) {
  ByteReader in(body);
  uint32_t count = 0;
  PROTO_READ(in.ReadU32(&count) && in.ReadU32(&m->omitted), "AGED_DUMPS reply");
  PROTO_TRY(CheckRange("count", count, 0, ATR_MAX_AGED_ENTRIES));
  PROTO_TRY(CheckCountFits(in, count, sizeof(atr_aged_entry) + 4 * 2, "entries"));
  m->entries.clear();
  m->entries.resize(count);
  for (AgedEntry& e : m->entries) {
    std::span<const uint8_t> reserved;
    PROTO_READ(in.ReadU64(&e.aged_unix_us) && in.ReadU32(&e.uid) && in.ReadU8(&e.reason) && in.ReadU8(&e.flags) &&
                   in.ReadBytes(2, &reserved),
               "AGED_DUMPS reply");
    for (uint8_t b : reserved) PROTO_TRY(CheckReserved("reserved", b));
    PROTO_TRY(CheckRange("reason", e.reason, ATR_AGED_COUNT, ATR_AGED_VACUUM));
    PROTO_TRY(CheckRange("flags", e.flags, 0, ATR_AGED_KNOWN_FLAGS));
    PROTO_TRY(ReadString16(in, "path", &e.path));
    PROTO_TRY(CheckPath("path", e.path, /*absolute=*/false));
    PROTO_TRY(ReadLabels16(in, &e.labels));
  }
  return Status::Ok();
}

}  // namespace atraced::proto
