#include "atraced/proto/cann_bin_text.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <vector>

namespace atraced::proto {
namespace {

constexpr uint32_t kMagic = 0xD928;
constexpr double kNsPerSec = 1e9;
constexpr double kKhzPerGhz = 1e6;
// A hostile struct segment can name many fields of length 0, each printed on every record
// while reading nothing: the text, not the input, is what must be bounded.
constexpr size_t kMaxText = kCannBinMaxText;

// Field types and show modes (CANN's TRACE_STRUCT_*).
constexpr uint8_t kTypeChar = 0;
constexpr uint8_t kArrayChar = 100;
constexpr uint8_t kModeBin = 1;
constexpr uint8_t kModeHex = 2;

struct Field {
  std::string name;
  uint8_t type = 0, mode = 0;
  uint16_t length = 0;
};
struct Entry {
  std::string name;
  std::vector<Field> fields;
};

// A cursor that reads as asys's file object does: a short read of a value is an error, a
// skip past the end is not (Python's read returns what there is).
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> b) : b_(b) {}
  bool Read(void* out, size_t n) {
    if (b_.size() - at_ < n) return false;
    std::memcpy(out, b_.data() + at_, n);
    at_ += n;
    return true;
  }
  template <typename T>
  bool Le(T* v) {
    uint8_t raw[sizeof(T)];
    if (!Read(raw, sizeof raw)) return false;
    uint64_t u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) u |= static_cast<uint64_t>(raw[i]) << (8 * i);
    *v = static_cast<T>(u);
    return true;
  }
  void Skip(size_t n) { at_ = n > b_.size() - at_ ? b_.size() : at_ + n; }
  size_t left() const { return b_.size() - at_; }

 private:
  std::span<const uint8_t> b_;
  size_t at_ = 0;
};

// A byte string decoded as UTF-8, as Python's bytes.decode(): nullopt when it is not.
std::optional<std::string> Utf8(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n;) {
    const uint8_t c = p[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n) return std::nullopt;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
    i += len;
  }
  return std::string(reinterpret_cast<const char*>(p), n);
}

size_t ElementSize(uint8_t type) {
  switch (type % 100) {
    case 0: case 1: case 2: return 1;
    case 3: case 4: return 2;
    case 5: case 6: return 4;
    case 7: case 8: return 8;
    default: return 0;
  }
}

// Python's bin() and hex() of an integer.
std::string InBase(__int128 v, unsigned base) {
  const bool negative = v < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), "0123456789abcdef"[static_cast<unsigned>(u % base)]);
    u /= base;
  } while (u != 0);
  return std::string(negative ? "-" : "") + (base == 2 ? "0b" : "0x") + digits;
}

// One element of a field, shown in its mode; false with `error` when asys fails on it.
bool Element(Cursor& in, const Field& f, std::string* out, std::string* error) {
  const uint8_t base = f.type % 100;
  if (base == kTypeChar) {
    uint8_t c = 0;
    if (!in.Le(&c)) return (*error = "record data ends inside a field", false);
    auto s = Utf8(&c, 1);
    if (!s) return (*error = "a char field is not UTF-8", false);
    if (f.mode == kModeBin || f.mode == kModeHex) {  // int() of a character: digits only
      if (c < '0' || c > '9') return (*error = "a char field shown as a number is not a digit", false);
      *out = InBase(c - '0', f.mode == kModeBin ? 2 : 16);
    } else {
      *out = *s;
    }
    return true;
  }
  __int128 v = 0;
  const bool is_signed = base % 2 == 1;
  bool read = false;
  switch (ElementSize(f.type)) {
    case 1: { uint8_t u; read = in.Le(&u); v = is_signed ? __int128{static_cast<int8_t>(u)} : __int128{u}; break; }
    case 2: { uint16_t u; read = in.Le(&u); v = is_signed ? __int128{static_cast<int16_t>(u)} : __int128{u}; break; }
    case 4: { uint32_t u; read = in.Le(&u); v = is_signed ? __int128{static_cast<int32_t>(u)} : __int128{u}; break; }
    case 8: { uint64_t u; read = in.Le(&u); v = is_signed ? __int128{static_cast<int64_t>(u)} : __int128{u}; break; }
    default: break;
  }
  if (!read) return (*error = "record data ends inside a field", false);
  if (f.mode == kModeBin || f.mode == kModeHex) {
    *out = InBase(v, f.mode == kModeBin ? 2 : 16);
  } else {
    const bool negative = v < 0;
    unsigned __int128 u = negative ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
    std::string digits;
    do {
      digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
      u /= 10;
    } while (u != 0);
    *out = (negative ? "-" : "") + digits;
  }
  return true;
}

// "name[value], " for one field of a record of `size` bytes; `used` the bytes it read.
bool FieldText(Cursor& in, const Field& f, uint32_t size, std::string* out, uint32_t* used, std::string* error) {
  const size_t element = ElementSize(f.type);
  int64_t length = f.length, left = size;
  std::string values;
  *used = 0;
  while (length > 0 && left > 0) {
    if (length < static_cast<int64_t>(element) || left < static_cast<int64_t>(element)) {
      return (*error = "a field's type and length do not fit the record", false);
    }
    std::string v;
    if (!Element(in, f, &v, error)) return false;
    length -= static_cast<int64_t>(element);
    left -= static_cast<int64_t>(element);
    *used += static_cast<uint32_t>(element);
    if (f.type < kArrayChar) {
      *out += f.name + "[" + v + "], ";
      return true;
    }
    values += (values.empty() || f.type == kArrayChar) ? v : ", " + v;
  }
  *out += f.name + "[" + values + "], ";
  return true;
}

// Python's datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S.%f"), split as asys
// splits it: "...SS.mmm.uuu".
bool LineTime(double seconds, std::string* out) {
  // Python refuses what its datetime cannot hold (years 1..9999).
  if (!std::isfinite(seconds) || seconds < -62135596800.0 || seconds > 253402300799.0) return false;
  double whole = 0;
  double us = std::modf(seconds, &whole) * 1e6;
  double rounded = std::round(us);
  if (std::fabs(us - rounded) == 0.5) rounded = 2.0 * std::round(us / 2.0);  // half to even
  if (rounded >= 1e6) {
    rounded -= 1e6;
    whole += 1;
  } else if (rounded < 0) {
    rounded += 1e6;
    whole -= 1;
  }
  const time_t t = static_cast<time_t>(whole);
  struct tm tm {};
  if (localtime_r(&t, &tm) == nullptr) return false;
  char buf[64];
  const long micro = static_cast<long>(rounded);
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%03ld.%03ld", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micro / 1000, micro % 1000);
  *out = buf;
  return true;
}

}  // namespace

CannBinText CannBinToText(std::span<const uint8_t> bytes, int32_t reader_utc_offset_s, size_t max_text) {
  CannBinText r;
  // The reader's bound, when below the file's: reaching it stops the text at a whole line.
  const bool reader_bound = max_text < kMaxText;
  const size_t limit = std::min(max_text, kMaxText);
  auto fail = [&r](std::string why) {
    r.error = std::move(why);
    return r;
  };
  Cursor in(bytes);
  uint32_t magic = 0, version = 0, struct_size = 0, data_size = 0, minutes_west = 0;
  uint8_t head[4];
  uint64_t real_time = 0, cpu_freq = 0;
  if (!in.Le(&magic) || !in.Le(&version)) return fail("shorter than the control head");
  if ((version != 2 && version != 3) || magic != kMagic) return fail("not a CANN trace .bin of version 2 or 3");
  if (!in.Read(head, 4)) return fail("shorter than the control head");
  if (head[3] != 0) return fail("trace type is not 0");
  if (!in.Le(&struct_size) || !in.Le(&data_size) || !in.Le(&minutes_west) || !in.Le(&real_time)) {
    return fail("shorter than the control head");
  }
  if (version == 3) {
    if (!in.Le(&cpu_freq)) return fail("shorter than the control head");
    in.Skip(8);
  } else {
    in.Skip(16);
  }
  if (in.left() <= struct_size) return fail("incomplete: no data after the struct segment");
  if (in.left() < static_cast<uint64_t>(struct_size) + data_size) {
    r.warning = "the data is incomplete, which may cause data loss";
  }

  uint32_t struct_count = 0;
  if (!in.Le(&struct_count)) return fail("the struct segment is truncated");
  in.Skip(36);
  std::map<uint8_t, Entry> entries;
  for (uint32_t i = 0; i < struct_count; ++i) {
    uint8_t name[32];
    uint32_t fields = 0;
    uint8_t type = 0;
    if (!in.Read(name, 32) || !in.Le(&fields) || !in.Le(&type)) return fail("the struct segment is truncated");
    in.Skip(3);
    auto decoded = Utf8(name, 32);
    if (!decoded) return fail("a struct name is not UTF-8");
    Entry e;
    for (char c : *decoded) if (c != '\0') e.name += c;
    for (uint32_t k = 0; k < fields; ++k) {
      uint8_t field_name[32];
      Field f;
      if (!in.Read(field_name, 32) || !in.Le(&f.type) || !in.Le(&f.mode) || !in.Le(&f.length)) {
        return fail("the struct segment is truncated");
      }
      in.Skip(4);
      auto fname = Utf8(field_name, 32);
      if (!fname) return fail("a field name is not UTF-8");
      for (char c : *fname) if (c != '\0') f.name += c;
      if (ElementSize(f.type) == 0 || (f.type > 8 && f.type < 100) || f.type > 108) {
        return fail("field " + f.name + " has an unknown type " + std::to_string(f.type));
      }
      e.fields.push_back(std::move(f));
    }
    entries[type] = std::move(e);  // a later entry of the same type replaces the earlier, as in asys
  }
  if (entries.empty()) return fail("no struct entry: the file is incomplete");

  const double offset_ns = (std::floor(reader_utc_offset_s / 60.0) - static_cast<double>(minutes_west)) * kNsPerSec;
  uint32_t msg_size = 0, msg_txt_size = 0, msg_num = 0, reserved = 0;
  if (!in.Le(&msg_size) || !in.Le(&msg_txt_size) || !in.Le(&msg_num) || !in.Le(&reserved)) {
    return fail("the data head is truncated");
  }
  std::string text;
  for (uint32_t m = 0; m < msg_num; ++m) {
    uint64_t cycle = 0;
    uint32_t size = 0;
    uint8_t busy = 0, type = 0;
    if (!in.Le(&cycle) || !in.Le(&size) || !in.Le(&busy) || !in.Le(&type)) return fail("a record head is truncated");
    in.Skip(2);
    if (busy != 0) {
      in.Skip(msg_txt_size);
      continue;
    }
    double seconds;
    if (cpu_freq != 0) {
      seconds = (static_cast<double>(real_time) + (static_cast<double>(cycle) / static_cast<double>(cpu_freq)) * kKhzPerGhz +
                 offset_ns) / kNsPerSec;
    } else {
      const unsigned __int128 sum = static_cast<unsigned __int128>(real_time) + cycle;  // Python ints: exact
      seconds = (static_cast<double>(sum) + offset_ns) / kNsPerSec;
    }
    std::string when;
    if (!LineTime(seconds, &when)) return fail("a record's time is out of range");
    const auto entry = entries.find(type);
    if (entry == entries.end()) {
      in.Skip(msg_txt_size);
      continue;
    }
    std::string line = when + " " + entry->second.name + ": ";
    uint32_t used_total = 0;
    for (const Field& f : entry->second.fields) {
      uint32_t used = 0;
      std::string error;
      if (!FieldText(in, f, size, &line, &used, &error)) return fail(error);
      used_total += used;
      if (line.size() >= limit) break;
    }
    if (line.size() < limit) {
      if (msg_txt_size > used_total) in.Skip(msg_txt_size - used_total);
      line.resize(line.size() - 2);  // asys removes the last ", " (or ": " without fields)
    }
    if (line.size() >= limit || text.size() + line.size() + 1 > limit) {  // the text, newline included, fits
      if (!reader_bound) return fail("the text would pass 64 MiB");
      r.stopped = true;
      break;
    }
    text += line;
    text += '\n';
  }
  text.erase(std::remove(text.begin(), text.end(), '\0'), text.end());
  r.text = std::move(text);
  r.ok = true;
  return r;
}

}  // namespace atraced::proto
