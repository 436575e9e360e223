// DEVICE_STATS (1.1, behind ATR_FEATURE_DEVICE_STATS): a process's device receiver tells
// the daemon what it counted, for STATUS.
#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckExactSize;
using internal::CheckRange;
using internal::CheckReserved;

void Encode(const DeviceStats& m, std::vector<uint8_t>& out) {
  PutU32(out, m.device_id);
  PutU32(out, 0);  // reserved
  for (uint64_t v : {m.received, m.saved, m.dropped_invalid, m.dropped_daemon, m.reconnects}) PutU64(out, v);
}

Status Decode(std::span<const uint8_t> payload, DeviceStats* m) {
  PROTO_TRY(CheckExactSize("DEVICE_STATS", payload.size(), sizeof(atr_device_stats)));
  ByteReader in(payload);
  uint32_t reserved = 0;
  PROTO_READ(in.ReadU32(&m->device_id) && in.ReadU32(&reserved) && in.ReadU64(&m->received) && in.ReadU64(&m->saved) &&
                 in.ReadU64(&m->dropped_invalid) && in.ReadU64(&m->dropped_daemon) && in.ReadU64(&m->reconnects),
             "DEVICE_STATS");
  PROTO_TRY(CheckRange("device_id", m->device_id, 0, ATR_MAX_DEVICE_ID));
  PROTO_TRY(CheckReserved("reserved", reserved));
  return Status::Ok();
}

}  // namespace atraced::proto
