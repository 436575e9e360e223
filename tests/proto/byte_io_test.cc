// The wire is little-endian on every host: these tests pin exact bytes.
#include <catch2/catch.hpp>

#include "atraced/proto/byte_io.h"
#include "proto_test_util.h"

namespace atraced::proto {
namespace {

using testing::Bytes;

TEST_CASE("Put helpers write little-endian bytes", "[byte_io]") {
  std::vector<uint8_t> out;
  SECTION("u8") {
    PutU8(out, 0xAB);
    CHECK(out == Bytes({0xAB}));
  }
  SECTION("u16") {
    PutU16(out, 0x1234);
    CHECK(out == Bytes({0x34, 0x12}));
  }
  SECTION("u32") {
    PutU32(out, 0x11223344);
    CHECK(out == Bytes({0x44, 0x33, 0x22, 0x11}));
  }
  SECTION("u64") {
    PutU64(out, 0x0102030405060708ull);
    CHECK(out == Bytes({0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
  }
  SECTION("negative i32 is two's complement") {
    PutI32(out, -2);
    CHECK(out == Bytes({0xFE, 0xFF, 0xFF, 0xFF}));
  }
  SECTION("magic spells ATRC") {
    PutU32(out, ATR_MAGIC);
    CHECK(out == Bytes({'A', 'T', 'R', 'C'}));
  }
  SECTION("appends after existing bytes") {
    out = {0xEE};
    PutU16(out, 1);
    PutZeros(out, 2);
    PutBytes(out, std::string_view("hi"));
    CHECK(out == Bytes({0xEE, 0x01, 0x00, 0x00, 0x00, 'h', 'i'}));
  }
}

TEST_CASE("Get helpers read little-endian bytes", "[byte_io]") {
  const auto b = Bytes({0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x81});
  CHECK(GetU16(b.data()) == 0x0708);
  CHECK(GetU32(b.data()) == 0x05060708u);
  CHECK(GetU64(b.data()) == 0x8102030405060708ull);
  CHECK(GetI32(b.data() + 4) == static_cast<int32_t>(0x81020304u));
  CHECK(GetI32(Bytes({0xFF, 0xFF, 0xFF, 0xFF}).data()) == -1);
}

TEST_CASE("ByteReader stops at the end and consumes nothing on failure", "[byte_io]") {
  const auto b = Bytes({0x01, 0x02, 0x03, 0x04, 0x05});
  ByteReader in(b);
  uint32_t u32 = 0;
  REQUIRE(in.ReadU32(&u32));
  CHECK(u32 == 0x04030201u);
  CHECK(in.remaining() == 1);
  uint16_t u16 = 0x7777;
  CHECK_FALSE(in.ReadU16(&u16));
  CHECK(u16 == 0x7777);
  CHECK(in.remaining() == 1);
  std::span<const uint8_t> rest;
  CHECK_FALSE(in.ReadBytes(2, &rest));
  REQUIRE(in.ReadBytes(1, &rest));
  CHECK(rest.size() == 1);
  CHECK(rest[0] == 0x05);
  CHECK(in.remaining() == 0);
  uint8_t u8 = 0;
  CHECK_FALSE(in.ReadU8(&u8));
}

}  // namespace
}  // namespace atraced::proto
