// LIST_LIVE (1.1, behind ATR_FEATURE_LIST_LIVE): `atracectl list --live`'s request and its
// reply. Same rules as codec.cc: the request's size is exact and its reserved bytes zero, so
// a decoded request re-encodes to the bytes it came from; a reply ignores bytes after what it
// knows (entries may gain strings at the body's end, as LIST's did).
#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckName;
using internal::CheckCountFits;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;
using internal::PutString16;
using internal::ReadLabels16;
using internal::ReadString16;

void Encode(const ListLive& m, std::vector<uint8_t>& out) {
  PutU8(out, static_cast<uint8_t>(m.job.size()));
  PutZeros(out, 7);
  PutBytes(out, m.job);
}

Status Decode(std::span<const uint8_t> payload, ListLive* m) {
  if (payload.size() < sizeof(atr_list_live)) {
    return Error(EBADMSG, "LIST_LIVE", "payload is " + std::to_string(payload.size()) + " bytes, expected at least 8");
  }
  ByteReader in(payload);
  uint8_t job_len = 0;
  std::span<const uint8_t> reserved;
  PROTO_READ(in.ReadU8(&job_len) && in.ReadBytes(7, &reserved), "LIST_LIVE");
  for (uint8_t b : reserved) PROTO_TRY(CheckReserved("reserved", b));
  PROTO_TRY(CheckRange("job_len", job_len, 0, ATR_MAX_LABEL));
  if (payload.size() != sizeof(atr_list_live) + job_len) {
    return Error(EBADMSG, "LIST_LIVE",
                 "payload is " + std::to_string(payload.size()) + " bytes, job_len says " +
                     std::to_string(sizeof(atr_list_live) + job_len));
  }
  std::span<const uint8_t> job;
  PROTO_READ(in.ReadBytes(job_len, &job), "LIST_LIVE");
  m->job.assign(job.begin(), job.end());
  if (std::string why = CheckLabel(LabelKind::kJob, m->job); !why.empty()) return Status::Error(EINVAL, why);
  return Status::Ok();
}

void Encode(const ListLiveReply& m, std::vector<uint8_t>& out) {
  PutU32(out, static_cast<uint32_t>(m.entries.size()));
  PutU32(out, m.omitted);
  for (const LiveEntry& e : m.entries) {
    PutI32(out, e.pid);
    PutU32(out, e.uid);
    PutU32(out, e.flags);
    PutU32(out, e.rings);
    PutU64(out, e.last_moved_unix_us);
    PutU64(out, e.still_ms);
    PutU64(out, e.timeout_ms);
    PutString16(out, e.comm);
    PutString16(out, e.labels.job);
    PutString16(out, e.labels.rank);
    PutString16(out, e.labels.world_size);
  }
}

Status Decode(std::span<const uint8_t> body, ListLiveReply* m) {
  ByteReader in(body);
  uint32_t count = 0;
  PROTO_READ(in.ReadU32(&count) && in.ReadU32(&m->omitted), "LIST_LIVE reply");
  PROTO_TRY(CheckRange("count", count, 0, ATR_MAX_LIVE_ENTRIES));
  PROTO_TRY(CheckCountFits(in, count, sizeof(atr_live_entry) + 4 * 2, "entries"));
  m->entries.clear();
  m->entries.resize(count);
  for (LiveEntry& e : m->entries) {
    PROTO_READ(in.ReadI32(&e.pid) && in.ReadU32(&e.uid) && in.ReadU32(&e.flags) && in.ReadU32(&e.rings) &&
                   in.ReadU64(&e.last_moved_unix_us) && in.ReadU64(&e.still_ms) && in.ReadU64(&e.timeout_ms),
               "LIST_LIVE reply");
    PROTO_TRY(CheckRange("pid", e.pid, 1, INT32_MAX));
    PROTO_TRY(ReadString16(in, "comm", &e.comm));
    if (!e.comm.empty()) PROTO_TRY(CheckName("comm", e.comm, ATR_MAX_PROGRAM_NAME));
    PROTO_TRY(ReadLabels16(in, &e.labels));
  }
  return Status::Ok();
}

}  // namespace atraced::proto
