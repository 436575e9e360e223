#include "atraced/rings/ring_format.h"

#include <cstring>

#include "atraced/proto/ring_positions.h"

namespace atraced::core {

namespace {

constexpr int64_t kNsPerSec = 1000000000;

// Days since 1970-01-01 to a civil date (H. Hinnant's algorithm): no time zone database,
// no locale, the same result on every host.
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

void PutLe(std::vector<uint8_t>& out, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A NUL-padded fixed-size name field (CANN's char[32]).
void PutName(std::vector<uint8_t>& out, const std::string& name, size_t size) {
  const size_t n = std::min(name.size(), size - 1);
  out.insert(out.end(), name.begin(), name.begin() + static_cast<std::ptrdiff_t>(n));
  out.insert(out.end(), size - n, 0);
}

// Writes `v` as exactly `width` decimal digits at p.
void PutDigits(char* p, size_t width, int64_t v) {
  for (size_t i = width; i > 0; --i, v /= 10) p[i - 1] = static_cast<char>('0' + v % 10);
}

// Appends CANN's line time to `out`. A full ring holds ~1000 records, most within the same
// second, so the "YYYY-MM-DD hh:mm:ss" part is formatted once per second (`cache`) and only
// the sub-second digits per record; no snprintf (it was a third of a save's CPU).
struct SecondCache {
  int64_t second = -1;
  char text[19];
};

void AppendLineTime(std::string& out, int64_t local_ns, SecondCache& cache) {
  if (local_ns < 0) local_ns = 0;
  const int64_t secs = local_ns / kNsPerSec;
  const int64_t sub = local_ns % kNsPerSec;
  if (secs != cache.second) {
    int64_t year;
    unsigned month, day;
    CivilFromDays(secs / 86400, &year, &month, &day);
    const int64_t sod = secs % 86400;
    char* t = cache.text;
    PutDigits(t, 4, year);
    t[4] = '-';
    PutDigits(t + 5, 2, month);
    t[7] = '-';
    PutDigits(t + 8, 2, day);
    t[10] = ' ';
    PutDigits(t + 11, 2, sod / 3600);
    t[13] = ':';
    PutDigits(t + 14, 2, sod / 60 % 60);
    t[16] = ':';
    PutDigits(t + 17, 2, sod % 60);
    cache.second = secs;
  }
  char frac[9] = {'.', 0, 0, 0, '.', 0, 0, 0, ' '};
  PutDigits(frac + 1, 3, sub / 1000000);
  PutDigits(frac + 5, 3, sub / 1000 % 1000);
  out.append(cache.text, sizeof cache.text);
  out.append(frac, sizeof frac);
}

}  // namespace

std::string FormatLineTime(int64_t local_ns) {
  std::string out;
  SecondCache cache;
  AppendLineTime(out, local_ns, cache);
  return out;
}

std::string LostRecordsLine(const proto::RingSnapshot& snap) {
  const uint64_t lost = snap.dropped + snap.torn + snap.invalid;
  if (lost == 0) return "";
  return "atraced: " + std::to_string(lost) + " record(s) lost: " + std::to_string(snap.dropped) + " dropped, " +
         std::to_string(snap.torn) + " torn, " + std::to_string(snap.invalid) + " invalid\n";
}

std::string RingPositionsLine(const proto::RingSnapshot& snap, const RingTimeline& time) {
  if (!snap.header_valid || snap.records.empty()) return "";
  std::vector<uint64_t> positions;
  positions.reserve(time.order().size());
  for (const size_t i : time.order()) positions.push_back(snap.records[i].index);
  return proto::FormatRingPositions(snap.monotonic_ns, positions);
}

std::string FormatRingText(const proto::RingSnapshot& snap, const RingTimeline& time, int32_t utc_offset_s) {
  std::string out;
  if (!snap.header_valid) return out;
  const int64_t offset_ns = static_cast<int64_t>(utc_offset_s) * kNsPerSec;
  // At most 28 bytes of time, msg_size - 1 of text and a newline a record: one allocation,
  // where half of that grew the buffer (and copied it) once for a ring of long records.
  out.reserve(snap.records.size() * (28 + size_t{snap.msg_size}) + 160);
  SecondCache cache;
  for (const size_t i : time.order()) {
    const proto::RingRecord& r = snap.records[i];
    // CANN: the text ends at min(length, msg_size - 1) and at its first NUL.
    const size_t limit = std::min<size_t>(r.data.size(), snap.msg_size - 1);
    const auto* begin = reinterpret_cast<const char*>(r.data.data());
    const size_t len = ::strnlen(begin, limit);
    AppendLineTime(out, time.WallNs(i) + offset_ns, cache);
    out.append(begin, len);
    // CANN adds no newline to an empty text (the next line would run on); we always end
    // the line.
    if (len == 0 || begin[len - 1] != '\n') out += '\n';
  }
  out += LostRecordsLine(snap);
  return out;
}

std::vector<uint8_t> FormatRingBinary(const proto::RingSnapshot& snap, const RingTimeline& time,
                                      const std::vector<proto::RingStructEntry>& structs, int32_t utc_offset_s) {
  std::vector<uint8_t> out;
  if (!snap.header_valid || snap.records.empty()) return out;
  const uint32_t slot = 16 + snap.msg_size;  // CANN's RbMsgHead + msgTxtSize
  const auto count = static_cast<uint32_t>(snap.records.size());
  uint32_t struct_size = 40;  // TraceStructSegmentHead
  for (const auto& e : structs) struct_size += 40 + 40 * static_cast<uint32_t>(e.fields.size());

  // TraceCtrlHead, 48 bytes.
  PutLe(out, kCannBinMagic, 4);
  PutLe(out, kCannBinVersion, 4);
  PutLe(out, 0, 1);  // pos: TRACE_POS_HOST
  PutLe(out, 0, 2);  // typeRes
  PutLe(out, 0, 1);  // traceType: TRACE_TYPE_BIN
  PutLe(out, struct_size, 4);
  PutLe(out, static_cast<uint64_t>(slot) * count, 4);                         // dataSize
  PutLe(out, static_cast<uint32_t>(static_cast<int32_t>(utc_offset_s / 60)), 4);  // minutesWest (tm_gmtoff / 60)
  PutLe(out, static_cast<uint64_t>(std::max<int64_t>(time.anchor_wall_ns(), 0)), 8);
  PutLe(out, kCannBinCpuFreqKhz, 8);
  PutLe(out, 0, 8);  // reserve

  // TraceStructSegmentHead, then per entry a TraceStructHead and its TraceStructFields.
  PutLe(out, structs.size(), 4);
  out.insert(out.end(), 36, 0);
  for (const auto& e : structs) {
    PutName(out, e.name, 32);
    PutLe(out, e.fields.size(), 4);
    PutLe(out, e.buffer_type, 1);
    out.insert(out.end(), 3, 0);
    for (const auto& f : e.fields) {
      PutName(out, f.name, 32);
      PutLe(out, f.type, 1);
      PutLe(out, f.mode, 1);
      PutLe(out, f.length, 2);
      out.insert(out.end(), 4, 0);
    }
  }

  // TraceStructDataHead.
  PutLe(out, slot, 4);
  PutLe(out, snap.msg_size, 4);
  PutLe(out, count, 4);
  out.insert(out.end(), 4, 0);

  // One RbMsgHead + payload per record; "cycle" is ns since the ring's anchor.
  for (const size_t i : time.order()) {
    const proto::RingRecord& r = snap.records[i];
    const int64_t cycle = time.SinceAnchorNs(i);
    PutLe(out, static_cast<uint64_t>(cycle < 0 ? 0 : cycle), 8);
    PutLe(out, r.data.size(), 4);
    PutLe(out, 0, 1);  // busy: only complete records are here
    PutLe(out, r.buffer_type, 1);
    out.insert(out.end(), 2, 0);
    out.insert(out.end(), r.data.begin(), r.data.end());
    out.insert(out.end(), snap.msg_size - r.data.size(), 0);
  }
  return out;
}

}  // namespace atraced::core
