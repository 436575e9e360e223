#include "checks.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "atraced/base/name_rule.h"

namespace atraced::proto::internal {

Status Error(int err, std::string_view field, std::string_view what) {
  std::string message;
  message.reserve(field.size() + 2 + what.size());
  message.append(field).append(": ").append(what);
  return Status::Error(err, std::move(message));
}

Status CheckExactSize(std::string_view message, size_t size, size_t want) {
  if (size == want) return Status::Ok();
  return Error(EBADMSG, message,
               "payload is " + std::to_string(size) + " bytes, expected " + std::to_string(want));
}

Status CheckMinSize(std::string_view message, size_t size, size_t want) {
  if (size >= want) return Status::Ok();
  return Error(EBADMSG, message,
               "payload is " + std::to_string(size) + " bytes, expected at least " +
                   std::to_string(want));
}

Status CheckReserved(std::string_view field, uint64_t value) {
  if (value == 0) return Status::Ok();
  return Error(EINVAL, field, "reserved, must be 0 (is " + std::to_string(value) + ")");
}

Status CheckNonZero(std::string_view field, uint64_t value) {
  if (value != 0) return Status::Ok();
  return Error(EINVAL, field, "must not be 0");
}

Status CheckRange(std::string_view field, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return Error(EINVAL, field,
               std::to_string(value) + " out of range " + std::to_string(lo) + ".." +
                   std::to_string(hi));
}

Status ReadTime(ByteReader& in, std::string* time) {
  std::span<const uint8_t> raw;
  if (!in.ReadBytes(ATR_TIME_LEN, &raw)) return Error(EBADMSG, "time", "truncated");
  if (std::all_of(raw.begin(), raw.end(), [](uint8_t c) { return c == 0; })) {
    time->clear();
    return Status::Ok();
  }
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] < '0' || raw[i] > '9') {
      char what[80];
      std::snprintf(what, sizeof(what),
                    "byte %zu is 0x%02x; expected 20 ASCII digits or 20 NUL bytes", i,
                    static_cast<unsigned>(raw[i]));
      return Error(EINVAL, "time", what);
    }
  }
  time->assign(raw.begin(), raw.end());
  return Status::Ok();
}

Status CheckName(std::string_view field, std::string_view name, size_t max_len) {
  if (name.size() > max_len) {
    return Error(ENAMETOOLONG, field,
                 std::to_string(name.size()) + " bytes, limit " + std::to_string(max_len));
  }
  std::string why;
  if (!IsSafeName(name, &why)) return Error(EINVAL, field, why);
  return Status::Ok();
}

Status ReadString16(ByteReader& in, std::string_view field, std::string* s) {
  uint16_t len = 0;
  if (!in.ReadU16(&len)) return Error(EBADMSG, field, "length truncated");
  std::span<const uint8_t> raw;
  if (!in.ReadBytes(len, &raw)) {
    return Error(EBADMSG, field,
                 "length " + std::to_string(len) + " exceeds the " +
                     std::to_string(in.remaining()) + " bytes left");
  }
  s->assign(raw.begin(), raw.end());
  return Status::Ok();
}

Status CheckPath(std::string_view field, std::string_view path, bool absolute) {
  if (path.empty()) return Error(EINVAL, field, "empty");
  if (path.find('\0') != std::string_view::npos) return Error(EINVAL, field, "contains NUL");
  if (absolute && path.front() != '/') return Error(EINVAL, field, "not absolute");
  if (!absolute && path.front() == '/') return Error(EINVAL, field, "not relative");
  return Status::Ok();
}

Status CheckCountFits(const ByteReader& in, uint32_t count, size_t min_item, std::string_view items) {
  if (count <= in.remaining() / min_item) return Status::Ok();
  return Error(EBADMSG, "count",
               std::to_string(count) + " " + std::string(items) + " cannot fit in " + std::to_string(in.remaining()) + " bytes");
}

Status ReadLabels16(ByteReader& in, Labels* labels) {
  PROTO_TRY(ReadString16(in, "job", &labels->job));
  PROTO_TRY(ReadString16(in, "rank", &labels->rank));
  PROTO_TRY(ReadString16(in, "world_size", &labels->world_size));
  for (auto [kind, value] : {std::pair{LabelKind::kJob, &labels->job}, std::pair{LabelKind::kRank, &labels->rank},
                             std::pair{LabelKind::kWorldSize, &labels->world_size}}) {
    if (std::string why = CheckLabel(kind, *value); !why.empty()) return Status::Error(EBADMSG, why);
  }
  return Status::Ok();
}

void PutString16(std::vector<uint8_t>& out, std::string_view s) {
  s = s.substr(0, std::numeric_limits<uint16_t>::max());
  PutU16(out, static_cast<uint16_t>(s.size()));
  PutBytes(out, s);
}

void PutTime(std::vector<uint8_t>& out, std::string_view time) {
  time = time.substr(0, ATR_TIME_LEN);
  PutBytes(out, time);
  PutZeros(out, ATR_TIME_LEN - time.size());
}

}  // namespace atraced::proto::internal
