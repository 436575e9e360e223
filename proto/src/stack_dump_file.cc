#include "atraced/proto/stack_dump_file.h"

#include <cstring>

namespace atraced::proto {

std::vector<uint8_t> EncodeStackDumpFile(const std::string& text) {
  std::vector<uint8_t> out(kStackDumpHeaderSize + text.size());
  std::memcpy(out.data(), kStackDumpMagic, sizeof kStackDumpMagic);
  const auto n = static_cast<uint32_t>(text.size());
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + kStackDumpHeaderSize, text.data(), text.size());
  return out;
}

bool DecodeStackDumpFile(std::span<const uint8_t> bytes, std::string* text, std::string* why) {
  if (bytes.size() < kStackDumpHeaderSize) {
    *why = "shorter than the 16-byte header (" + std::to_string(bytes.size()) + " bytes)";
    return false;
  }
  if (std::memcmp(bytes.data(), kStackDumpMagic, sizeof kStackDumpMagic) != 0) {
    *why = "not an atraced stack dump (magic)";
    return false;
  }
  uint32_t n = 0, reserved = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<uint32_t>(bytes[8 + i]) << (8 * i);
    reserved |= static_cast<uint32_t>(bytes[12 + i]) << (8 * i);
  }
  if (reserved != 0) {
    *why = "reserved header bytes are not 0";
    return false;
  }
  if (n > kMaxStackDumpText || bytes.size() - kStackDumpHeaderSize != n) {
    *why = "the header says " + std::to_string(n) + " bytes of text, the file holds " +
           std::to_string(bytes.size() - kStackDumpHeaderSize);
    return false;
  }
  text->assign(reinterpret_cast<const char*>(bytes.data()) + kStackDumpHeaderSize, n);
  return true;
}

}  // namespace atraced::proto
