// DUMPS_EXPORTED (1.1, behind ATR_FEATURE_DUMPS_EXPORTED): `atracectl export` saying which
// dump directories a bundle now holds, and the daemon's count of those it released. Same
// rules as codec.cc: exact size, reserved zero, so a decoded request re-encodes to the bytes
// it came from; a reply ignores bytes after what it knows.
#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "checks.h"

namespace atraced::proto {

using internal::CheckPath;
using internal::CheckRange;
using internal::CheckReserved;
using internal::Error;
using internal::PutString16;
using internal::ReadString16;

void Encode(const DumpsExported& m, std::vector<uint8_t>& out) {
  PutU32(out, static_cast<uint32_t>(m.paths.size()));
  PutU32(out, 0);  // reserved
  for (const std::string& path : m.paths) PutString16(out, path);
}

Status Decode(std::span<const uint8_t> payload, DumpsExported* m) {
  ByteReader in(payload);
  uint32_t count = 0, reserved = 0;
  PROTO_READ(in.ReadU32(&count) && in.ReadU32(&reserved), "DUMPS_EXPORTED");
  PROTO_TRY(CheckReserved("reserved", reserved));
  PROTO_TRY(CheckRange("count", count, 1, ATR_MAX_LIST_ENTRIES));
  m->paths.clear();
  for (uint32_t i = 0; i < count; ++i) {
    std::string path;
    PROTO_TRY(ReadString16(in, "path", &path));
    PROTO_TRY(CheckPath("path", path, /*absolute=*/false));
    m->paths.push_back(std::move(path));
  }
  if (in.remaining() != 0) {
    return Error(EBADMSG, "DUMPS_EXPORTED", std::to_string(in.remaining()) + " bytes after the last path");
  }
  return Status::Ok();
}

void Encode(const DumpsExportedReply& m, std::vector<uint8_t>& out) {
  PutU32(out, m.released);
  PutU32(out, m.skipped);
}

Status Decode(std::span<const uint8_t> body, DumpsExportedReply* m) {
  ByteReader in(body);
  PROTO_READ(in.ReadU32(&m->released) && in.ReadU32(&m->skipped), "DUMPS_EXPORTED reply");
  return Status::Ok();
}

}  // namespace atraced::proto
