// Requests: exact byte layouts, round trips, and every rejection rule.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "proto_test_util.h"

namespace atraced::proto {
namespace {

using testing::Bytes;
using testing::EncodeToVector;
using testing::RequireDecoded;
using testing::RequireRejected;

const std::string kTime = "20240131235959123456";

// ---- HELLO ----

TEST_CASE("HELLO: layout and round trip", "[codec][hello]") {
  Hello in;
  in.major = 1;
  in.minor = 7;
  in.features = 0x8000000000000001ull;
  const auto payload = EncodeToVector(in);
  CHECK(payload == Bytes({0x01, 0x00, 0x07, 0x00, 0, 0, 0, 0,  //
                          0x01, 0, 0, 0, 0, 0, 0, 0x80}));
  const Hello out = RequireDecoded<Hello>(payload);
  CHECK(out.major == 1);
  CHECK(out.minor == 7);
  CHECK(out.features == 0x8000000000000001ull);
}

TEST_CASE("HELLO: rejections", "[codec][hello]") {
  auto payload = EncodeToVector(Hello{});
  SECTION("short") {
    payload.pop_back();
    RequireRejected<Hello>(payload, ATR_EBADMSG, "HELLO: payload is 15 bytes, expected 16");
  }
  SECTION("trailing") {
    payload.push_back(0);
    RequireRejected<Hello>(payload, ATR_EBADMSG, "HELLO: payload is 17 bytes, expected 16");
  }
  SECTION("empty") { RequireRejected<Hello>({}, ATR_EBADMSG, "HELLO"); }
  SECTION("reserved") {
    payload[7] = 1;
    RequireRejected<Hello>(payload, ATR_EINVAL, "reserved");
  }
}

// ---- EVENT_BEGIN ----

EventBegin DeviceEvent() {
  EventBegin m;
  m.event_id = 0x01020304;
  m.kind = ATR_EVENT_STACKCORE;
  m.side = ATR_SIDE_DEVICE;
  m.device_id = ATR_MAX_DEVICE_ID;
  m.host_pid = 4242;
  m.time = kTime;
  return m;
}

TEST_CASE("EVENT_BEGIN: layout and round trip", "[codec][event_begin]") {
  const auto payload = EncodeToVector(DeviceEvent());
  REQUIRE(payload.size() == 36);
  CHECK(std::vector<uint8_t>(payload.begin(), payload.begin() + 16) ==
        Bytes({0x04, 0x03, 0x02, 0x01, 2, 1, 0, 0, 0xFF, 0x03, 0, 0, 0x92, 0x10, 0, 0}));
  CHECK(std::string(payload.begin() + 16, payload.end()) == kTime);

  const EventBegin out = RequireDecoded<EventBegin>(payload);
  CHECK(out.event_id == 0x01020304u);
  CHECK(out.kind == ATR_EVENT_STACKCORE);
  CHECK(out.side == ATR_SIDE_DEVICE);
  CHECK(out.device_id == ATR_MAX_DEVICE_ID);
  CHECK(out.host_pid == 4242);
  CHECK(out.time == kTime);
}

TEST_CASE("EVENT_BEGIN: host event with the daemon's clock", "[codec][event_begin]") {
  EventBegin in;
  in.event_id = 1;
  in.kind = GENERATE(ATR_EVENT_SCHEDULE, ATR_EVENT_STACKCORE, ATR_EVENT_EXIT);
  in.side = ATR_SIDE_HOST;
  const auto payload = EncodeToVector(in);
  for (size_t i = 16; i < 36; ++i) REQUIRE(payload[i] == 0);
  const EventBegin out = RequireDecoded<EventBegin>(payload);
  CHECK(out.kind == in.kind);
  CHECK(out.time.empty());
  CHECK(out.host_pid == 0);
}

TEST_CASE("EVENT_BEGIN: rejections", "[codec][event_begin]") {
  auto payload = EncodeToVector(DeviceEvent());
  SECTION("short") {
    payload.resize(35);
    RequireRejected<EventBegin>(payload, ATR_EBADMSG, "EVENT_BEGIN: payload is 35 bytes");
  }
  SECTION("trailing") {
    payload.push_back('x');
    RequireRejected<EventBegin>(payload, ATR_EBADMSG, "expected 36");
  }
  SECTION("zero event_id") {
    payload[0] = payload[1] = payload[2] = payload[3] = 0;
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "event_id: must not be 0");
  }
  SECTION("kind out of range") {
    payload[4] = GENERATE(0, 4, 255);
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "kind: ");
  }
  SECTION("side out of range") {
    payload[5] = 2;
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "side: 2 out of range 0..1");
  }
  SECTION("reserved") {
    payload[7] = 0x80;
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "reserved");
  }
  SECTION("device_id too large") {
    payload[8] = 0x00;
    payload[9] = 0x04;  // 1024
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "device_id: 1024 out of range 0..1023");
  }
  SECTION("device_id on a host event") {
    payload[5] = ATR_SIDE_HOST;
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "device_id: must be 0 for a host event");
  }
  SECTION("own time on a host event") {
    payload[5] = ATR_SIDE_HOST;
    payload[8] = payload[9] = 0;
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "time: must be all NUL for a host event");
  }
  SECTION("negative host_pid") {
    payload[15] = 0xFF;
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "host_pid: negative");
  }
  SECTION("time with a letter") {
    payload[16 + 5] = 'a';
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "time: byte 5 is 0x61");
  }
  SECTION("time partly NUL") {
    payload[35] = 0;
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "time: byte 19 is 0x00");
  }
  SECTION("time with one non-NUL byte") {
    for (size_t i = 16; i < 36; ++i) payload[i] = 0;
    payload[20] = '1';
    RequireRejected<EventBegin>(payload, ATR_EINVAL, "time: byte 0 is 0x00");
  }
}

// ---- FILE_OPEN ----

FileOpen ObjectFile() {
  FileOpen m;
  m.event_id = 7;
  m.file_id = 0x0A0B0C0D;
  m.form = ATR_FILE_OBJECT;
  m.suffix = ATR_SUFFIX_BIN;
  m.name = "hccl_op-1.x";
  return m;
}

FileOpen StackcoreFile() {
  FileOpen m;
  m.event_id = 7;
  m.file_id = 8;
  m.form = ATR_FILE_STACKCORE;
  m.signo = 11;
  m.tid = 12345;
  m.time = kTime;
  m.name = "python3.9";
  return m;
}

FileOpen TsFile() {
  FileOpen m;
  m.event_id = 7;
  m.file_id = 9;
  m.form = ATR_FILE_TS;
  m.device_id = 3;
  return m;
}

TEST_CASE("FILE_OPEN: layout and round trip", "[codec][file_open]") {
  SECTION("object") {
    const auto payload = EncodeToVector(ObjectFile());
    REQUIRE(payload.size() == 44 + 11);
    CHECK(std::vector<uint8_t>(payload.begin(), payload.begin() + 24) ==
          Bytes({7, 0, 0, 0, 0x0D, 0x0C, 0x0B, 0x0A, 1, 1, 11, 0,  //
                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
    CHECK(std::string(payload.begin() + 44, payload.end()) == "hccl_op-1.x");
    const FileOpen out = RequireDecoded<FileOpen>(payload);
    CHECK(out.event_id == 7);
    CHECK(out.file_id == 0x0A0B0C0Du);
    CHECK(out.form == ATR_FILE_OBJECT);
    CHECK(out.suffix == ATR_SUFFIX_BIN);
    CHECK(out.name == "hccl_op-1.x");
    CHECK(out.time.empty());
  }
  SECTION("stackcore") {
    const auto payload = EncodeToVector(StackcoreFile());
    REQUIRE(payload.size() == 44 + 9);
    CHECK(payload[16] == 11);
    CHECK(payload[20] == 0x39);  // 12345 = 0x3039
    CHECK(payload[21] == 0x30);
    const FileOpen out = RequireDecoded<FileOpen>(payload);
    CHECK(out.form == ATR_FILE_STACKCORE);
    CHECK(out.signo == 11);
    CHECK(out.tid == 12345);
    CHECK(out.time == kTime);
    CHECK(out.name == "python3.9");
  }
  SECTION("stackcore with the peer's own program name") {
    FileOpen in = StackcoreFile();
    in.name.clear();
    const auto payload = EncodeToVector(in);
    CHECK(payload.size() == 44);
    CHECK(payload[10] == 0);  // name_len
    CHECK(RequireDecoded<FileOpen>(payload).name.empty());
  }
  SECTION("stackcore with the daemon's time") {
    FileOpen in = StackcoreFile();
    in.time.clear();
    CHECK(RequireDecoded<FileOpen>(EncodeToVector(in)).time.empty());
  }
  SECTION("ts") {
    const auto payload = EncodeToVector(TsFile());
    REQUIRE(payload.size() == 44);
    CHECK(payload[12] == 3);
    const FileOpen out = RequireDecoded<FileOpen>(payload);
    CHECK(out.form == ATR_FILE_TS);
    CHECK(out.device_id == 3);
    CHECK(out.name.empty());
  }
  SECTION("names at their length limits") {
    FileOpen object = ObjectFile();
    object.name = std::string(ATR_MAX_OBJECT_NAME, 'o');
    CHECK(RequireDecoded<FileOpen>(EncodeToVector(object)).name == object.name);
    FileOpen program = StackcoreFile();
    program.name = std::string(ATR_MAX_PROGRAM_NAME, 'p');
    CHECK(RequireDecoded<FileOpen>(EncodeToVector(program)).name == program.name);
  }
}

TEST_CASE("FILE_OPEN: rejections", "[codec][file_open]") {
  auto object = EncodeToVector(ObjectFile());
  auto stackcore = EncodeToVector(StackcoreFile());
  auto ts = EncodeToVector(TsFile());
  SECTION("short header") {
    ts.pop_back();
    RequireRejected<FileOpen>(ts, ATR_EBADMSG, "FILE_OPEN: payload is 43 bytes, expected at least 44");
  }
  SECTION("name_len larger than the rest") {
    object.pop_back();
    RequireRejected<FileOpen>(object, ATR_EBADMSG, "name_len: 11 but 10 bytes follow");
  }
  SECTION("trailing bytes after the name") {
    object.push_back('z');
    RequireRejected<FileOpen>(object, ATR_EBADMSG, "name_len: 11 but 12 bytes follow");
  }
  SECTION("zero event_id") {
    object[0] = 0;
    RequireRejected<FileOpen>(object, ATR_EINVAL, "event_id: must not be 0");
  }
  SECTION("zero file_id") {
    object[4] = object[5] = object[6] = object[7] = 0;
    RequireRejected<FileOpen>(object, ATR_EINVAL, "file_id: must not be 0");
  }
  SECTION("form out of range") {
    ts[8] = GENERATE(0, 4);
    RequireRejected<FileOpen>(ts, ATR_EINVAL, "form: ");
  }
  SECTION("suffix out of range") {
    object[9] = 2;
    RequireRejected<FileOpen>(object, ATR_EINVAL, "suffix: 2 out of range 0..1");
  }
  SECTION("suffix on a non-object file") {
    stackcore[9] = ATR_SUFFIX_BIN;
    RequireRejected<FileOpen>(stackcore, ATR_EINVAL, "suffix: must be 0 unless form is OBJECT");
  }
  SECTION("device_id too large for TS") {
    ts[12] = 0x00;
    ts[13] = 0x04;
    RequireRejected<FileOpen>(ts, ATR_EINVAL, "device_id: 1024 out of range");
  }
  SECTION("device_id on an object file") {
    object[12] = 1;
    RequireRejected<FileOpen>(object, ATR_EINVAL, "device_id: must be 0 unless form is TS");
  }
  SECTION("signo on an object file") {
    object[16] = 6;
    RequireRejected<FileOpen>(object, ATR_EINVAL, "signo: must be 0 unless form is STACKCORE");
  }
  SECTION("tid on a TS file") {
    ts[20] = 1;
    RequireRejected<FileOpen>(ts, ATR_EINVAL, "tid: must be 0 unless form is STACKCORE");
  }
  SECTION("negative signo") {
    stackcore[19] = 0x80;
    RequireRejected<FileOpen>(stackcore, ATR_EINVAL, "signo: negative");
  }
  SECTION("negative tid") {
    stackcore[23] = 0xFF;
    RequireRejected<FileOpen>(stackcore, ATR_EINVAL, "tid: negative");
  }
  SECTION("time on an object file") {
    object[24] = '2';
    for (size_t i = 25; i < 44; ++i) object[i] = '0';
    RequireRejected<FileOpen>(object, ATR_EINVAL, "time: must be all NUL unless form is STACKCORE");
  }
  SECTION("bad stackcore time") {
    stackcore[24 + 19] = ':';
    RequireRejected<FileOpen>(stackcore, ATR_EINVAL, "time: byte 19 is 0x3a");
  }
  SECTION("name on a TS file") {
    FileOpen m = TsFile();
    m.name = "x";
    RequireRejected<FileOpen>(EncodeToVector(m), ATR_EINVAL, "name_len: must be 0 for form TS");
  }
}

struct BadName {
  std::string name;
  int32_t status;
  std::string message;
};

TEST_CASE("FILE_OPEN: an empty object name", "[codec][file_open][names]") {
  FileOpen m = ObjectFile();
  m.name.clear();
  RequireRejected<FileOpen>(EncodeToVector(m), ATR_EINVAL, "object name: empty");
}

TEST_CASE("FILE_OPEN: bad object and program names", "[codec][file_open][names]") {
  const BadName bad = GENERATE(
      BadName{".", ATR_EINVAL, "'.' not allowed"},
      BadName{"..", ATR_EINVAL, "'..' not allowed"},
      BadName{"a/b", ATR_EINVAL, "character 0x2f '/' not allowed"},
      BadName{std::string("a\0b", 3), ATR_EINVAL, "character 0x00 not allowed"},
      BadName{"caf\xc3\xa9", ATR_EINVAL, "character 0xc3 not allowed"},
      BadName{"a b", ATR_EINVAL, "character 0x20 ' ' not allowed"},
      BadName{"tab\t", ATR_EINVAL, "character 0x09 not allowed"});
  SECTION("object name") {
    FileOpen m = ObjectFile();
    m.name = bad.name;
    RequireRejected<FileOpen>(EncodeToVector(m), bad.status, "object name: " + bad.message);
  }
  SECTION("program name") {
    FileOpen m = StackcoreFile();
    m.name = bad.name;
    RequireRejected<FileOpen>(EncodeToVector(m), bad.status, "program name: " + bad.message);
  }
}

TEST_CASE("FILE_OPEN: names over their limits", "[codec][file_open][names]") {
  FileOpen object = ObjectFile();
  object.name = std::string(ATR_MAX_OBJECT_NAME + 1, 'o');
  RequireRejected<FileOpen>(EncodeToVector(object), ATR_ENAMETOOLONG,
                            "object name: 32 bytes, limit 31");
  FileOpen program = StackcoreFile();
  program.name = std::string(ATR_MAX_PROGRAM_NAME + 1, 'p');
  RequireRejected<FileOpen>(EncodeToVector(program), ATR_ENAMETOOLONG,
                            "program name: 64 bytes, limit 63");
  // Length is checked before the charset, so a long name with a '/' reports its length.
  object.name = std::string(40, '/');
  RequireRejected<FileOpen>(EncodeToVector(object), ATR_ENAMETOOLONG, "object name: 40 bytes");
}

// ---- FILE_APPEND ----

TEST_CASE("FILE_APPEND: layout and round trip", "[codec][file_append]") {
  const auto data = Bytes({0x00, 0xFF, 'x'});
  const auto payload = EncodeToVector(FileAppend{0x11223344, data});
  CHECK(payload == Bytes({0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0, 0x00, 0xFF, 'x'}));
  const FileAppend out = RequireDecoded<FileAppend>(payload);
  CHECK(out.file_id == 0x11223344u);
  REQUIRE(out.data.size() == 3);
  CHECK(out.data.data() == payload.data() + 8);  // a view, not a copy
  CHECK(out.data[1] == 0xFF);

  const FileAppend empty = RequireDecoded<FileAppend>(EncodeToVector(FileAppend{5, {}}));
  CHECK(empty.data.empty());

  std::vector<uint8_t> max(ATR_MAX_APPEND, 0x42);
  const auto big = EncodeToVector(FileAppend{5, max});
  CHECK(big.size() == ATR_MAX_PAYLOAD);
  CHECK(RequireDecoded<FileAppend>(big).data.size() == ATR_MAX_APPEND);
}

TEST_CASE("FILE_APPEND: rejections", "[codec][file_append]") {
  auto payload = EncodeToVector(FileAppend{1, Bytes({1, 2})});
  SECTION("short") {
    RequireRejected<FileAppend>(Bytes({1, 0, 0, 0, 0, 0, 0}), ATR_EBADMSG,
                                "FILE_APPEND: payload is 7 bytes, expected at least 8");
  }
  SECTION("zero file_id") {
    payload[0] = 0;
    RequireRejected<FileAppend>(payload, ATR_EINVAL, "file_id: must not be 0");
  }
  SECTION("reserved") {
    payload[4] = 1;
    RequireRejected<FileAppend>(payload, ATR_EINVAL, "reserved");
  }
  SECTION("data over ATR_MAX_APPEND") {
    std::vector<uint8_t> data(ATR_MAX_APPEND + 1);
    RequireRejected<FileAppend>(EncodeToVector(FileAppend{1, data}), ATR_EMSGSIZE,
                                "data: 1048569 bytes, limit 1048568");
  }
}

// ---- FILE_GET_FD, FILE_CLOSE, EVENT_END ----

TEST_CASE("id requests: layout, round trip, rejections", "[codec][id_request]") {
  const auto payload = EncodeToVector(IdRequest{0xCAFEBABE});
  CHECK(payload == Bytes({0xBE, 0xBA, 0xFE, 0xCA, 0, 0, 0, 0}));
  CHECK(RequireDecoded<IdRequest>(payload).id == 0xCAFEBABEu);

  RequireRejected<IdRequest>(EncodeToVector(IdRequest{0}), ATR_EINVAL, "id: must not be 0");
  RequireRejected<IdRequest>(Bytes({1, 0, 0, 0, 0, 0, 0}), ATR_EBADMSG, "expected 8");
  RequireRejected<IdRequest>(Bytes({1, 0, 0, 0, 0, 0, 0, 0, 0}), ATR_EBADMSG, "9 bytes");
  RequireRejected<IdRequest>(Bytes({1, 0, 0, 0, 0, 0, 0, 9}), ATR_EINVAL, "reserved");
}

// ---- STATUS ----

TEST_CASE("STATUS request: empty payload only", "[codec][status]") {
  CHECK(EncodeToVector(StatusRequest{}).empty());
  RequireDecoded<StatusRequest>({});
  RequireRejected<StatusRequest>(Bytes({0}), ATR_EBADMSG,
                                 "STATUS: payload is 1 bytes, expected 0");
}

// ---- LIST ----

TEST_CASE("LIST request: layout, round trip, rejections", "[codec][list]") {
  const auto payload = EncodeToVector(ListRequest{0x0102030405060708ull, 1024});
  CHECK(payload == Bytes({8, 7, 6, 5, 4, 3, 2, 1, 0x00, 0x04, 0, 0, 0, 0, 0, 0}));
  const ListRequest out = RequireDecoded<ListRequest>(payload);
  CHECK(out.after_seq == 0x0102030405060708ull);
  CHECK(out.max_entries == 1024);
  CHECK(RequireDecoded<ListRequest>(EncodeToVector(ListRequest{0, 1})).max_entries == 1);

  RequireRejected<ListRequest>(EncodeToVector(ListRequest{0, 0}), ATR_EINVAL,
                               "max_entries: 0 out of range 1..1024");
  RequireRejected<ListRequest>(EncodeToVector(ListRequest{0, 1025}), ATR_EINVAL,
                               "max_entries: 1025 out of range 1..1024");
  auto reserved = payload;
  reserved[12] = 1;
  RequireRejected<ListRequest>(reserved, ATR_EINVAL, "reserved");
  auto trailing = payload;
  trailing.push_back(0);
  RequireRejected<ListRequest>(trailing, ATR_EBADMSG, "expected 16");
}

// ---- VACUUM ----

TEST_CASE("VACUUM request: layout, round trip, rejections", "[codec][vacuum]") {
  const auto payload = EncodeToVector(VacuumRequest{true});
  CHECK(payload == Bytes({1, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(RequireDecoded<VacuumRequest>(payload).dry_run);
  CHECK_FALSE(RequireDecoded<VacuumRequest>(EncodeToVector(VacuumRequest{false})).dry_run);

  RequireRejected<VacuumRequest>(Bytes({2, 0, 0, 0, 0, 0, 0, 0}), ATR_EINVAL,
                                 "dry_run: 2 out of range 0..1");
  RequireRejected<VacuumRequest>(Bytes({0, 0, 0, 0, 0, 0, 0, 1}), ATR_EINVAL, "reserved");
  RequireRejected<VacuumRequest>(Bytes({0}), ATR_EBADMSG, "VACUUM: payload is 1 bytes");
}

// ---- VACUUM_BY ----

TEST_CASE("VACUUM_BY request: layout, round trip, rejections", "[codec][vacuum]") {
  VacuumBy m;
  m.dry_run = true;
  m.verbs = ATR_VACUUM_OLDER_THAN | ATR_VACUUM_MAX_USE | ATR_VACUUM_KEEP;
  m.keep = 3;
  m.older_than_us = 7200000000ull;
  m.max_use = 1ull << 30;
  const auto payload = EncodeToVector(m);
  CHECK(payload == Bytes({1, 0, 7, 0, 3, 0, 0, 0, 0x00, 0x48, 0x27, 0xad, 0x01, 0, 0, 0,  //
                          0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  const VacuumBy out = RequireDecoded<VacuumBy>(payload);
  CHECK(out.dry_run);
  CHECK(out.verbs == 7);
  CHECK(out.keep == 3);
  CHECK(out.older_than_us == 7200000000ull);
  CHECK(out.max_use == 1ull << 30);
  VacuumBy max_use_zero;
  max_use_zero.verbs = ATR_VACUUM_MAX_USE;  // down to nothing: allowed
  CHECK(RequireDecoded<VacuumBy>(EncodeToVector(max_use_zero)).max_use == 0);

  auto with = [&m](auto change) {
    VacuumBy v = m;
    change(v);
    return EncodeToVector(v);
  };
  RequireRejected<VacuumBy>(with([](VacuumBy& v) { v.verbs = 0, v.keep = 0, v.older_than_us = 0, v.max_use = 0; }),
                            ATR_EINVAL, "verbs: none given");
  RequireRejected<VacuumBy>(with([](VacuumBy& v) { v.verbs |= 8; }), ATR_EINVAL, "verbs: unknown bits 15");
  RequireRejected<VacuumBy>(with([](VacuumBy& v) { v.keep = 0; }), ATR_EINVAL, "keep: must be at least 1");
  RequireRejected<VacuumBy>(with([](VacuumBy& v) { v.older_than_us = 0; }), ATR_EINVAL, "older_than_us: must be at least 1");
  RequireRejected<VacuumBy>(with([](VacuumBy& v) { v.verbs = ATR_VACUUM_KEEP; }), ATR_EINVAL,
                            "older_than_us: set without its verb");
  auto bad = payload;
  bad[0] = 2;
  RequireRejected<VacuumBy>(bad, ATR_EINVAL, "dry_run: 2 out of range 0..1");
  bad = payload;
  bad[1] = 1;
  RequireRejected<VacuumBy>(bad, ATR_EINVAL, "reserved0");
  bad = payload;
  bad[31] = 1;
  RequireRejected<VacuumBy>(bad, ATR_EINVAL, "reserved");
  RequireRejected<VacuumBy>(std::span(payload).first(31), ATR_EBADMSG, "VACUUM_BY: payload is 31 bytes");
}

// ---- any request: every truncation of a valid payload is refused, never read past ----

TEST_CASE("every truncation of a valid request is rejected", "[codec]") {
  const auto event = EncodeToVector(DeviceEvent());
  for (size_t n = 0; n < event.size(); ++n) {
    EventBegin m;
    INFO("EVENT_BEGIN truncated to " << n);
    REQUIRE(Decode(std::span(event).first(n), &m).err() ==
            EBADMSG);
  }
  const auto file = EncodeToVector(StackcoreFile());
  for (size_t n = 0; n < file.size(); ++n) {
    FileOpen m;
    INFO("FILE_OPEN truncated to " << n);
    REQUIRE(Decode(std::span(file).first(n), &m).err() ==
            EBADMSG);
  }
}

}  // namespace
}  // namespace atraced::proto
