// Helpers shared by the proto tests.
#ifndef ATRACED_TESTS_PROTO_PROTO_TEST_UTIL_H_
#define ATRACED_TESTS_PROTO_PROTO_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/proto/codec.h"

namespace atraced::proto::testing {

inline std::vector<uint8_t> Bytes(std::initializer_list<int> values) {
  std::vector<uint8_t> out;
  for (int v : values) out.push_back(static_cast<uint8_t>(v));
  return out;
}

template <typename Message>
std::vector<uint8_t> EncodeToVector(const Message& m) {
  std::vector<uint8_t> out;
  Encode(m, out);
  return out;
}

inline std::vector<uint8_t> MakeFrame(uint16_t opcode, uint16_t flags, uint32_t request_id,
                                      std::span<const uint8_t> payload) {
  std::vector<uint8_t> out;
  AppendFrame(out, opcode, flags, request_id, payload);
  return out;
}

// `hexdump -C` format, the one PROTOCOL.md uses.
inline std::string HexDump(std::span<const uint8_t> bytes) {
  std::string out;
  char buf[32];
  for (size_t row = 0; row < bytes.size(); row += 16) {
    std::snprintf(buf, sizeof(buf), "%08zx ", row);
    out += buf;
    for (size_t i = row; i < row + 16; ++i) {
      if (i % 8 == 0) out += ' ';
      if (i < bytes.size()) {
        std::snprintf(buf, sizeof(buf), "%02x ", bytes[i]);
        out += buf;
      } else {
        out += "   ";
      }
    }
    out += " |";
    for (size_t i = row; i < row + 16 && i < bytes.size(); ++i) {
      out += (bytes[i] >= 0x20 && bytes[i] < 0x7f) ? static_cast<char>(bytes[i]) : '.';
    }
    out += "|\n";
  }
  char end[32];
  std::snprintf(end, sizeof(end), "%08zx\n", bytes.size());
  out += end;
  return out;
}

// Decodes `payload` as Message and requires the error whose reply carries `status` (an
// atr_status, as the client sees it) with `needle` in the message.
template <typename Message>
void RequireRejected(std::span<const uint8_t> payload, int32_t status, std::string_view needle) {
  Message m;
  Status r = Decode(payload, &m);
  INFO("expected status " << status << " with \"" << needle << "\"");
  REQUIRE_FALSE(r.ok());
  INFO("got " << WireStatus(r) << " \"" << r.message() << "\"");
  CHECK(WireStatus(r) == status);
  CHECK(r.message().find(needle) != std::string::npos);
}

template <typename Message>
Message RequireDecoded(std::span<const uint8_t> payload) {
  Message m;
  Status r = Decode(payload, &m);
  if (!r.ok()) FAIL_CHECK("decode failed: " << r.err() << " " << r.message());
  REQUIRE(r.ok());
  return m;
}

}  // namespace atraced::proto::testing

#endif  // ATRACED_TESTS_PROTO_PROTO_TEST_UTIL_H_
