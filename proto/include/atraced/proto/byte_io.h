// Little-endian byte stores and loads for the wire format.
//
// The wire is little-endian whatever the host is, and structs are never copied onto it, so
// every field goes through these helpers. They assemble values with shifts rather than
// memcpy so the result does not depend on host byte order or alignment.
#ifndef ATRACED_PROTO_BYTE_IO_H_
#define ATRACED_PROTO_BYTE_IO_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace atraced::proto {

inline void PutU8(std::vector<uint8_t>& out, uint8_t v) { out.push_back(v); }

inline void PutU16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

inline void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

inline void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int shift = 0; shift < 64; shift += 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

// Signed values travel as their two's-complement bit pattern (C++20 guarantees it).
inline void PutI32(std::vector<uint8_t>& out, int32_t v) { PutU32(out, static_cast<uint32_t>(v)); }

inline void PutBytes(std::vector<uint8_t>& out, std::span<const uint8_t> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

inline void PutBytes(std::vector<uint8_t>& out, std::string_view bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

inline void PutZeros(std::vector<uint8_t>& out, size_t n) { out.insert(out.end(), n, 0); }

// Loads from a pointer the caller has bounds-checked.
inline uint16_t GetU16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

inline uint32_t GetU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

inline uint64_t GetU64(const uint8_t* p) {
  return static_cast<uint64_t>(GetU32(p)) | (static_cast<uint64_t>(GetU32(p + 4)) << 32);
}

inline int32_t GetI32(const uint8_t* p) { return static_cast<int32_t>(GetU32(p)); }

// A bounds-checked cursor over a payload. Every Read* returns false, and consumes nothing,
// when fewer bytes remain than the field needs; decoders turn that into ATR_EBADMSG.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }
  std::span<const uint8_t> rest() const { return bytes_.subspan(pos_); }

  bool ReadU8(uint8_t* v) { return Read(1, [&](const uint8_t* p) { *v = p[0]; }); }
  bool ReadU16(uint16_t* v) { return Read(2, [&](const uint8_t* p) { *v = GetU16(p); }); }
  bool ReadU32(uint32_t* v) { return Read(4, [&](const uint8_t* p) { *v = GetU32(p); }); }
  bool ReadU64(uint64_t* v) { return Read(8, [&](const uint8_t* p) { *v = GetU64(p); }); }
  bool ReadI32(int32_t* v) { return Read(4, [&](const uint8_t* p) { *v = GetI32(p); }); }

  // A view of the next n bytes; valid as long as the underlying payload is.
  bool ReadBytes(size_t n, std::span<const uint8_t>* v) {
    return Read(n, [&](const uint8_t* p) { *v = std::span<const uint8_t>(p, n); });
  }

 private:
  template <typename Store>
  bool Read(size_t n, Store store) {
    if (remaining() < n) return false;
    store(bytes_.data() + pos_);
    pos_ += n;
    return true;
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace atraced::proto

#endif  // ATRACED_PROTO_BYTE_IO_H_
