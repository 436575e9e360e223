// 1.1 requests (ATR_FEATURE_MEMFD): layouts, round trips and every rejection rule; and the
// HELLO reply's daemon_pid.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/proto/ledger_layout.h"
#include "atraced/proto/ring_layout.h"
#include "proto_test_util.h"

namespace atraced::proto {
namespace {

using testing::Bytes;
using testing::EncodeToVector;
using testing::RequireDecoded;
using testing::RequireRejected;

RingRegister BinaryRing() {
  RingRegister m;
  m.object_id = 0x01020304;
  m.flags = ATR_RING_EXIT_SAVE | ATR_RING_NO_LOCK;
  m.msg_num = 1024;
  m.msg_size = 112;
  m.ring_bytes = 151552;
  m.utc_offset_s = -3600;
  m.name = "hccl";
  m.structs = {RingStructEntry{2, "task", {RingStructField{6, 2, 4, "id"}}}};
  return m;
}

TEST_CASE("RING_REGISTER: layout and round trip", "[codec][ring]") {
  const auto payload = EncodeToVector(BinaryRing());
  CHECK(payload == Bytes({0x04, 0x03, 0x02, 0x01, 0, 0x03, 4, 1,  // id, type, flags, name_len, structs
                          0x00, 0x04, 0, 0, 112, 0, 0, 0,          // msg_num, msg_size
                          0x00, 0x50, 0x02, 0, 0xf0, 0xf1, 0xff, 0xff,  // ring_bytes, utc_offset -3600
                          'h', 'c', 'c', 'l',                      // name
                          2, 4, 1, 0, 't', 'a', 's', 'k',          // struct head + name
                          6, 2, 4, 0, 2, 0, 'i', 'd'}));           // field head + name
  const auto out = RequireDecoded<RingRegister>(payload);
  CHECK(out.object_id == 0x01020304);
  CHECK(out.utc_offset_s == -3600);
  REQUIRE(out.structs.size() == 1);
  CHECK(out.structs[0].fields[0].name == "id");
}

TEST_CASE("RING_REGISTER: rejections", "[codec][ring]") {
  auto reject = [](RingRegister m, int32_t status, const char* needle) {
    RequireRejected<RingRegister>(EncodeToVector(m), status, needle);
  };
  RingRegister m = BinaryRing();
  SECTION("id") { m.object_id = 0; reject(m, ATR_EINVAL, "object_id"); }
  SECTION("tracer type") { m.tracer_type = 1; reject(m, ATR_EINVAL, "tracer_type"); }
  SECTION("flags") { m.flags = 16; reject(m, ATR_EINVAL, "flags"); }
  SECTION("msg_num not a power of two") { m.msg_num = 1000; reject(m, ATR_EINVAL, "msg_num"); }
  SECTION("msg_num too big") { m.msg_num = 2048; reject(m, ATR_EINVAL, "msg_num"); }
  SECTION("msg_size") { m.msg_size = 63; reject(m, ATR_EINVAL, "msg_size"); }
  SECTION("CANN's 128 KiB") { m.msg_size = 113; reject(m, ATR_EINVAL, "131072"); }
  SECTION("ring too small") { m.ring_bytes = 4096; reject(m, ATR_EINVAL, "ring_bytes"); }
  SECTION("ring too big") { m.ring_bytes = ATR_RING_MAX_BYTES + 1; reject(m, ATR_EINVAL, "ring_bytes"); }
  SECTION("utc offset") { m.utc_offset_s = 86401; reject(m, ATR_EINVAL, "utc_offset_s"); }
  SECTION("object name") { m.name = "a/b"; reject(m, ATR_EINVAL, "object name"); }
  SECTION("empty name") { m.name = ""; reject(m, ATR_EINVAL, "object name"); }
  SECTION("long name") { m.name = std::string(32, 'a'); reject(m, ATR_ENAMETOOLONG, "object name"); }
  SECTION("11 structs") {
    m.structs.assign(11, m.structs[0]);
    reject(m, ATR_EINVAL, "struct_count");
  }
  SECTION("buffer type 10") { m.structs[0].buffer_type = 10; reject(m, ATR_EINVAL, "buffer_type"); }
  SECTION("not ascending") {
    m.structs.push_back(m.structs[0]);
    reject(m, ATR_EINVAL, "ascending");
  }
  SECTION("no fields") { m.structs[0].fields.clear(); reject(m, ATR_EINVAL, "field_count"); }
  SECTION("field type") { m.structs[0].fields[0].type = 9; reject(m, ATR_EINVAL, "type"); }
  SECTION("field mode") { m.structs[0].fields[0].mode = 4; reject(m, ATR_EINVAL, "mode"); }
  SECTION("field name NUL") { m.structs[0].fields[0].name = std::string("a\0b", 3); reject(m, ATR_EINVAL, "NUL"); }
  SECTION("field name long") { m.structs[0].fields[0].name = std::string(32, 'f'); reject(m, ATR_ENAMETOOLONG, "name"); }
  SECTION("struct name long") { m.structs[0].name = std::string(32, 's'); reject(m, ATR_ENAMETOOLONG, "name"); }
  SECTION("trailing byte") {
    auto p = EncodeToVector(m);
    p.push_back(0);
    RequireRejected<RingRegister>(p, ATR_EBADMSG, "after the last struct");
  }
  SECTION("every truncation") {
    const auto p = EncodeToVector(m);
    for (size_t n = 0; n < p.size(); ++n) {
      RingRegister out;
      const auto r = Decode(std::span<const uint8_t>(p.data(), n), &out);
      REQUIRE_FALSE(r.ok());
      CHECK(r.err() == EBADMSG);
    }
  }
  SECTION("reserved field byte") {
    auto p = EncodeToVector(m);
    p[p.size() - 3] = 1;  // the field head's reserved byte
    RequireRejected<RingRegister>(p, ATR_EINVAL, "reserved");
  }
}

TEST_CASE("RING_REGISTER with ATR_RING_LEDGER: the ledger's geometry, not CANN's", "[codec][ring]") {
  RingRegister m;
  m.object_id = 7;
  m.flags = ATR_RING_LEDGER | ATR_RING_EXIT_SAVE;
  m.msg_num = 1024;  // 1024 * (192 + 16) is past CANN's 128 KiB: a ledger is not held to it
  m.msg_size = ATR_LEDGER_RECORD_SIZE;
  m.ring_bytes = static_cast<uint32_t>(ATR_LEDGER_BYTES(1024));
  m.name = "hccl";
  const auto out = RequireDecoded<RingRegister>(EncodeToVector(m));
  CHECK(out.flags == (ATR_RING_LEDGER | ATR_RING_EXIT_SAVE));
  CHECK(out.msg_num == 1024);
  auto reject = [](RingRegister r, int32_t status, const char* needle) {
    RequireRejected<RingRegister>(EncodeToVector(r), status, needle);
  };
  SECTION("a record size that is not the ledger's") { m.msg_size = 128; reject(m, ATR_EINVAL, "msg_size"); }
  SECTION("too many records") { m.msg_num = 2048; reject(m, ATR_EINVAL, "msg_num"); }
  SECTION("smaller than its records") { m.ring_bytes = 4096; reject(m, ATR_EINVAL, "ring_bytes"); }
  SECTION("with struct entries") {
    m.structs = {RingStructEntry{2, "task", {RingStructField{6, 2, 4, "id"}}}};
    reject(m, ATR_EINVAL, "struct_count");
  }
  SECTION("no-lock or counter") {
    m.flags |= ATR_RING_COUNTER;
    reject(m, ATR_EINVAL, "flags");
  }
  SECTION("trailing byte") {
    auto p = EncodeToVector(m);
    p.push_back(0);
    RequireRejected<RingRegister>(p, ATR_EBADMSG, "after the name");
  }
}

TEST_CASE("RING_REPORT, RING_SAVE_ALL, GOODBYE: layouts and rejections", "[codec][ring]") {
  const auto report = EncodeToVector(RingReport{true, {7, 9}});
  CHECK(report == Bytes({1, 0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0}));
  CHECK(RequireDecoded<RingReport>(report).object_ids == std::vector<uint32_t>{7, 9});
  RequireRejected<RingReport>(EncodeToVector(RingReport{false, {}}), ATR_EINVAL, "count");
  RequireRejected<RingReport>(EncodeToVector(RingReport{false, {3, 3}}), ATR_EINVAL, "listed twice");
  RequireRejected<RingReport>(EncodeToVector(RingReport{false, {0}}), ATR_EINVAL, "object_id");
  RequireRejected<RingReport>(EncodeToVector(RingReport{false, std::vector<uint32_t>(101, 1)}), ATR_EINVAL, "count");
  auto short_report = report;
  short_report.pop_back();
  RequireRejected<RingReport>(short_report, ATR_EBADMSG, "RING_REPORT");
  auto bad_wait = report;
  bad_wait[0] = 2;
  RequireRejected<RingReport>(bad_wait, ATR_EINVAL, "wait");
  auto reserved = report;
  reserved[2] = 1;
  RequireRejected<RingReport>(reserved, ATR_EINVAL, "reserved");

  const auto save = EncodeToVector(RingSaveAll{true, 0});
  CHECK(save == Bytes({1, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(RequireDecoded<RingSaveAll>(save).wait);
  RequireRejected<RingSaveAll>(EncodeToVector(RingSaveAll{false, 1}), ATR_EINVAL, "tracer_type");
  auto save_reserved = save;
  save_reserved[7] = 1;
  RequireRejected<RingSaveAll>(save_reserved, ATR_EINVAL, "reserved");

  CHECK(EncodeToVector(Goodbye{}).empty());
  RequireDecoded<Goodbye>({});
  RequireRejected<Goodbye>(Bytes({0}), ATR_EBADMSG, "GOODBYE");
}

TEST_CASE("CRASH: 24 bytes, signo and tid in range, reserved zero", "[codec][crash]") {
  const auto crash = EncodeToVector(Crash{11, 1, 0x1234, 0x1122334455667788ull});
  CHECK(crash == Bytes({11, 0, 0, 0, 1, 0, 0, 0, 0x34, 0x12, 0, 0, 0, 0, 0, 0,  //
                        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}));
  const Crash m = RequireDecoded<Crash>(crash);
  CHECK(m.signo == 11);
  CHECK(m.code == 1);
  CHECK(m.tid == 0x1234);
  CHECK(m.fault_addr == 0x1122334455667788ull);
  CHECK(RequireDecoded<Crash>(EncodeToVector(Crash{6, -6, 1, 0})).code == -6);  // SI_TKILL from abort()
  RequireRejected<Crash>(EncodeToVector(Crash{0, 0, 1, 0}), ATR_EINVAL, "signo");
  RequireRejected<Crash>(EncodeToVector(Crash{65, 0, 1, 0}), ATR_EINVAL, "signo");
  RequireRejected<Crash>(EncodeToVector(Crash{11, 0, 0, 0}), ATR_EINVAL, "tid");
  RequireRejected<Crash>(EncodeToVector(Crash{11, 0, -1, 0}), ATR_EINVAL, "tid");
  auto reserved = crash;
  reserved[12] = 1;
  RequireRejected<Crash>(reserved, ATR_EINVAL, "reserved");
  auto short_crash = crash;
  short_crash.pop_back();
  RequireRejected<Crash>(short_crash, ATR_EBADMSG, "CRASH");
}

TEST_CASE("DUMP: 8 bytes, signo and tid in range", "[codec][crash]") {
  const auto dump = EncodeToVector(Dump{35, 0x1234});
  CHECK(dump == Bytes({35, 0, 0, 0, 0x34, 0x12, 0, 0}));
  const Dump m = RequireDecoded<Dump>(dump);
  CHECK(m.signo == 35);
  CHECK(m.tid == 0x1234);
  RequireRejected<Dump>(EncodeToVector(Dump{0, 1}), ATR_EINVAL, "signo");
  RequireRejected<Dump>(EncodeToVector(Dump{65, 1}), ATR_EINVAL, "signo");
  RequireRejected<Dump>(EncodeToVector(Dump{35, 0}), ATR_EINVAL, "tid");
  auto long_dump = dump;
  long_dump.push_back(0);
  RequireRejected<Dump>(long_dump, ATR_EBADMSG, "DUMP");
}

TEST_CASE("STACK_DUMP: 16 bytes, signo and tid in range, known flags, reserved zero", "[codec][crash]") {
  const auto dump = EncodeToVector(StackDump{35, 0x1234, ATR_STACK_DUMP_ALL_THREADS});
  CHECK(dump == Bytes({35, 0, 0, 0, 0x34, 0x12, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}));
  const StackDump m = RequireDecoded<StackDump>(dump);
  CHECK(m.signo == 35);
  CHECK(m.tid == 0x1234);
  CHECK(m.flags == ATR_STACK_DUMP_ALL_THREADS);
  RequireRejected<StackDump>(EncodeToVector(StackDump{0, 1, 0}), ATR_EINVAL, "signo");
  RequireRejected<StackDump>(EncodeToVector(StackDump{35, 0, 0}), ATR_EINVAL, "tid");
  RequireRejected<StackDump>(EncodeToVector(StackDump{35, 1, 2}), ATR_EINVAL, "flags");
  auto reserved = dump;
  reserved[12] = 1;
  RequireRejected<StackDump>(reserved, ATR_EINVAL, "reserved");
  auto short_dump = dump;
  short_dump.pop_back();
  RequireRejected<StackDump>(short_dump, ATR_EBADMSG, "STACK_DUMP");
}

TEST_CASE("HELLO reply: daemon_pid exactly when the memfd feature is granted", "[codec][ring]") {
  HelloReply with{1, 1, ATR_MAX_PAYLOAD, ATR_FEATURE_MEMFD, 10, 20, 4242};
  const auto body = EncodeToVector(with);
  REQUIRE(body.size() == 32);
  CHECK(RequireDecoded<HelloReply>(body).daemon_pid == 4242);
  HelloReply without{1, 0, ATR_MAX_PAYLOAD, ATR_FEATURE_FD_PASSING, 10, 20, 4242};
  CHECK(EncodeToVector(without).size() == 24);  // a 1.0 body: no pid
  CHECK(RequireDecoded<HelloReply>(EncodeToVector(without)).daemon_pid == 0);
  auto truncated = body;
  truncated.resize(24);  // granted, but the pid is missing
  HelloReply out;
  const auto r = Decode(truncated, &out);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err() == EBADMSG);
  auto reserved = body;
  reserved[31] = 1;
  REQUIRE_FALSE(Decode(reserved, &out).ok());
}

}  // namespace
}  // namespace atraced::proto
