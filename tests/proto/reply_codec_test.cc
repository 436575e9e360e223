// Replies: reply head, every body, and their rejection rules.
#include <catch2/catch.hpp>

#include <map>

#include <cstring>

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

ReplyHead RequireHead(std::span<const uint8_t> payload) {
  ReplyHead head;
  Status r = DecodeReply(payload, &head);
  if (!r.ok()) FAIL_CHECK("DecodeReply failed: " << r.message());
  REQUIRE(r.ok());
  return head;
}

void RequireHeadRejected(std::span<const uint8_t> payload, int32_t status,
                         const std::string& needle) {
  ReplyHead head;
  Status r = DecodeReply(payload, &head);
  REQUIRE_FALSE(r.ok());
  INFO(r.message());
  CHECK(WireStatus(r) == status);
  CHECK(r.message().find(needle) != std::string::npos);
}

TEST_CASE("reply head: OK with a body", "[codec][reply]") {
  std::vector<uint8_t> payload;
  EncodeReplyOk(payload);
  Encode(SizeReply{0x1122334455667788ull}, payload);
  CHECK(payload == Bytes({0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}));
  const ReplyHead head = RequireHead(payload);
  CHECK(head.status == ATR_OK);
  CHECK(head.message.empty());
  REQUIRE(head.body.size() == 8);
  CHECK(head.body.data() == payload.data() + 8);
  CHECK(RequireDecoded<SizeReply>(head.body).size == 0x1122334455667788ull);
}

TEST_CASE("reply head: error with a message", "[codec][reply]") {
  std::vector<uint8_t> payload;
  EncodeReplyError(Status::Error(EINVAL, "kind: 9 out of range"), payload);
  REQUIRE(payload.size() == 8 + 2 + 20);
  CHECK(std::vector<uint8_t>(payload.begin(), payload.begin() + 10) ==
        Bytes({0xEA, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 20, 0}));  // -22
  const ReplyHead head = RequireHead(payload);
  CHECK(head.status == ATR_EINVAL);
  CHECK(head.message == "kind: 9 out of range");
  CHECK(head.body.empty());
}

TEST_CASE("reply head: long messages are cut on a UTF-8 boundary", "[codec][reply]") {
  std::vector<uint8_t> payload;
  SECTION("ASCII") {
    EncodeReplyError(Status::Error(EIO, std::string(1000, 'm')), payload);
    CHECK(RequireHead(payload).message == std::string(ATR_MAX_MESSAGE, 'm'));
  }
  SECTION("a two-byte sequence straddling the limit") {
    std::string text(ATR_MAX_MESSAGE - 1, 'm');
    text += "\xc3\xa9tail";  // é at bytes 254..255
    EncodeReplyError(Status::Error(EIO, text), payload);
    CHECK(RequireHead(payload).message == std::string(ATR_MAX_MESSAGE - 1, 'm'));
  }
  SECTION("exactly the limit is kept") {
    EncodeReplyError(Status::Error(EIO, std::string(ATR_MAX_MESSAGE, 'm')), payload);
    CHECK(RequireHead(payload).message.size() == ATR_MAX_MESSAGE);
  }
}

TEST_CASE("reply head: rejections", "[codec][reply]") {
  RequireHeadRejected(Bytes({0, 0, 0, 0, 0, 0, 0}), ATR_EBADMSG, "reply: payload is 7 bytes");
  RequireHeadRejected(Bytes({0, 0, 0, 0, 1, 0, 0, 0}), ATR_EINVAL, "reply reserved");
  RequireHeadRejected(Bytes({5, 0, 0, 0, 0, 0, 0, 0}), ATR_EINVAL, "status: 5 is positive");
  // An error without its message length.
  RequireHeadRejected(Bytes({0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}), ATR_EBADMSG, "message");
  // A message length past the end.
  RequireHeadRejected(Bytes({0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 3, 0, 'a', 'b'}), ATR_EBADMSG,
                      "message: length 3 exceeds the 2 bytes left");
  // A message over ATR_MAX_MESSAGE.
  std::vector<uint8_t> payload = Bytes({0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0x00, 0x01});
  payload.resize(payload.size() + 256, 'x');
  RequireHeadRejected(payload, ATR_EBADMSG, "message: 256 bytes, limit 255");
}

TEST_CASE("HELLO reply: layout and round trip", "[codec][reply][hello]") {
  const HelloReply in{1, 0, ATR_MAX_PAYLOAD, ATR_FEATURE_FD_PASSING, 1234, 1000};
  const auto body = EncodeToVector(in);
  CHECK(body == Bytes({1, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 1, 0, 0, 0, 0, 0, 0, 0,  //
                       0xD2, 0x04, 0, 0, 0xE8, 0x03, 0, 0}));
  const HelloReply out = RequireDecoded<HelloReply>(body);
  CHECK(out.major == 1);
  CHECK(out.minor == 0);
  CHECK(out.max_payload == ATR_MAX_PAYLOAD);
  CHECK(out.features == ATR_FEATURE_FD_PASSING);
  CHECK(out.peer_pid == 1234);
  CHECK(out.peer_uid == 1000);

  auto longer = body;
  longer.push_back(0x77);  // a field from a later minor version
  CHECK(RequireDecoded<HelloReply>(longer).peer_uid == 1000);
  RequireRejected<HelloReply>(std::span(body).first(23), ATR_EBADMSG,
                              "HELLO reply: payload is 23 bytes, expected at least 24");
}

TEST_CASE("path reply: round trip and rejections", "[codec][reply]") {
  const std::string path = "/var/log/atrace/trace_1_2_20240131235959123456/1_event_2_x";
  const auto body = EncodeToVector(PathReply{path});
  REQUIRE(body.size() == 2 + path.size());
  CHECK(body[0] == path.size());
  CHECK(body[1] == 0);
  CHECK(RequireDecoded<PathReply>(body).path == path);

  RequireRejected<PathReply>(EncodeToVector(PathReply{"relative/x"}), ATR_EINVAL,
                             "path: not absolute");
  RequireRejected<PathReply>(EncodeToVector(PathReply{""}), ATR_EINVAL, "path: empty");
  RequireRejected<PathReply>(EncodeToVector(PathReply{std::string("/a\0b", 4)}), ATR_EINVAL,
                             "path: contains NUL");
  RequireRejected<PathReply>(Bytes({5, 0, '/', 'a'}), ATR_EBADMSG, "path: length 5");
  RequireRejected<PathReply>(Bytes({5}), ATR_EBADMSG, "path: length truncated");
}

TEST_CASE("size reply: round trip and rejections", "[codec][reply]") {
  CHECK(EncodeToVector(SizeReply{258}) == Bytes({2, 1, 0, 0, 0, 0, 0, 0}));
  CHECK(RequireDecoded<SizeReply>(Bytes({2, 1, 0, 0, 0, 0, 0, 0, 9})).size == 258);
  RequireRejected<SizeReply>(Bytes({2, 1, 0, 0, 0, 0, 0}), ATR_EBADMSG, "size reply");
}

StatusReply SampleStatus() {
  StatusReply s;
  s.record_num = 1;
  s.host_dirs = 2;
  s.device_dirs = 3;
  s.exit_dirs = 4;
  s.clients = 5;
  s.events_begun = 6;
  s.dirs_aged = 7;
  s.bytes_written = 0x0102030405060708ull;
  s.removal_failures = 9;
  s.requests_refused = 10;
  s.root = "/var/log";
  s.bytes_apparent = 1ull << 40;
  return s;
}

TEST_CASE("STATUS reply: layout, round trip, rejections", "[codec][reply][status]") {
  const auto body = EncodeToVector(SampleStatus());
  REQUIRE(body.size() == 64 + 2 + 8 + 8);
  CHECK(std::vector<uint8_t>(body.begin(), body.begin() + 24) ==
        Bytes({1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(body[40] == 8);  // bytes_written, low byte first
  CHECK(body[47] == 1);
  CHECK(body[64] == 8);  // root length
  const StatusReply out = RequireDecoded<StatusReply>(body);
  CHECK(out.record_num == 1);
  CHECK(out.clients == 5);
  CHECK(out.events_begun == 6);
  CHECK(out.bytes_written == 0x0102030405060708ull);
  CHECK(out.requests_refused == 10);
  CHECK(out.root == "/var/log");
  CHECK(out.bytes_apparent == 1ull << 40);  // appended after the root path
  CHECK(body[74 + 5] == 1);

  auto extended = body;
  extended.push_back(1);  // later minor versions append after the root path
  CHECK(RequireDecoded<StatusReply>(extended).root == "/var/log");
  // An older daemon's body ends at the root; its bytes_written was the file length.
  CHECK(RequireDecoded<StatusReply>(std::span(body).first(74)).bytes_apparent == 0x0102030405060708ull);
  CHECK(RequireDecoded<StatusReply>(std::span(body).first(80)).bytes_apparent == 0x0102030405060708ull);

  // What the decoder filled in for an older daemon is not re-encoded: the body comes back
  // as it was (the frame decoder fuzzer's round-trip rule found this).
  for (size_t cut : {size_t{74}, size_t{80}}) {
    const auto older = RequireDecoded<StatusReply>(std::span(body).first(cut));
    CHECK_FALSE(older.apparent_sent);
    CHECK(EncodeToVector(older) == std::vector<uint8_t>(body.begin(), body.begin() + 74));
  }

  auto reserved = body;
  reserved[20] = 1;
  RequireRejected<StatusReply>(reserved, ATR_EINVAL, "reserved");
  RequireRejected<StatusReply>(std::span(body).first(63), ATR_EBADMSG, "STATUS reply");
  RequireRejected<StatusReply>(std::span(body).first(64), ATR_EBADMSG, "root: length truncated");
}

TEST_CASE("STATUS reply: the retention block round-trips, and one cut short is not half read",
          "[codec][reply][status]") {
  StatusReply s = SampleStatus();
  auto& r = s.retention;
  r.present = true;
  r.max_use = 1ull << 32;
  r.keep_free = 3;
  r.fs_free = 4;
  r.used_exit = 5;
  r.aged_keep_free = 6;
  r.refused_client_bytes = 7;
  r.exit_record_num = 100;
  r.aging_policy = 1;
  r.max_age_s = 3600;
  const auto body = EncodeToVector(s);
  REQUIRE(body.size() == 64 + 2 + 8 + 8 + sizeof(atr_status_reply_retention));
  const StatusReply out = RequireDecoded<StatusReply>(body);
  CHECK(out.retention.present);
  CHECK(out.retention.max_use == 1ull << 32);
  CHECK(out.retention.used_exit == 5);
  CHECK(out.retention.aged_keep_free == 6);
  CHECK(out.retention.refused_client_bytes == 7);
  CHECK(out.retention.exit_record_num == 100);
  CHECK(out.retention.aging_policy == 1);
  CHECK(out.retention.max_age_s == 3600);
  CHECK(EncodeToVector(out) == body);
  const auto cut = RequireDecoded<StatusReply>(std::span(body).first(body.size() - 1));
  CHECK_FALSE(cut.retention.present);
  CHECK(cut.retention.max_use == 0);
  CHECK(cut.bytes_apparent == s.bytes_apparent);
}

TEST_CASE("STATUS reply: the pools block round-trips, an older reader ignores it, and a bad one is not read",
          "[codec][reply][status][shares]") {
  StatusReply s = SampleStatus();
  s.retention.present = true;
  s.shares.present = true;
  s.shares.pools.push_back({ATR_POOL_RINGS, 64, 16, 20, {{65534, 16}, {0, 4}}});
  s.shares.pools.push_back({ATR_POOL_RING_MEMORY, 1ull << 32, 1ull << 30, 12345, {}});
  s.shares.pools.push_back({200, 1, 1, 0, {}});  // a pool of a later version: kept, to be skipped
  const auto body = EncodeToVector(s);
  const size_t before = 64 + 2 + 8 + 8 + sizeof(atr_status_reply_retention);
  REQUIRE(body.size() == before + 8 + 3 * sizeof(atr_status_pool) + 2 * sizeof(atr_status_pool_uid));
  const StatusReply out = RequireDecoded<StatusReply>(body);
  REQUIRE(out.shares.present);
  REQUIRE(out.shares.pools.size() == 3);
  CHECK(out.shares.pools[0].pool == ATR_POOL_RINGS);
  CHECK(out.shares.pools[0].per_uid == 16);
  CHECK(out.shares.pools[0].uids == std::vector<std::pair<uint32_t, uint64_t>>{{65534, 16}, {0, 4}});
  CHECK(out.shares.pools[1].limit == 1ull << 32);
  CHECK(out.shares.pools[2].pool == 200);
  CHECK(EncodeToVector(out) == body);
  // What a reader before the block sees: the retention block, whole.
  const auto older = RequireDecoded<StatusReply>(std::span(body).first(before));
  CHECK(older.retention.present);
  CHECK_FALSE(older.shares.present);
  // Cut short, or more uids than a pool may list: none of it is believed, the rest stands.
  const auto cut = RequireDecoded<StatusReply>(std::span(body).first(body.size() - 1));
  CHECK(cut.retention.present);
  CHECK_FALSE(cut.shares.present);
  CHECK(cut.shares.pools.empty());
  auto bad = body;
  const uint32_t too_many = ATR_MAX_POOL_UIDS + 1;
  std::memcpy(bad.data() + before + 8 + 4, &too_many, 4);
  CHECK_FALSE(RequireDecoded<StatusReply>(bad).shares.present);
  auto reserved = body;
  reserved[before + 8 + 1] = 1;  // a pool's reserved byte
  CHECK_FALSE(RequireDecoded<StatusReply>(reserved).shares.present);
}

TEST_CASE("STATUS reply: the devices block round-trips, a reader before it sees the pools whole, and a bad one is not read",
          "[codec][reply][status][devices]") {
  StatusReply s = SampleStatus();
  s.retention.present = true;
  s.shares.present = true;
  s.shares.pools.push_back({ATR_POOL_RINGS, 64, 16, 20, {}});
  s.devices.present = true;
  s.devices.devices.push_back({0, 3, 10, 9, 1, 1, 0});
  s.devices.devices.push_back({1023, 1, 2, 2, 0, 0, 4});
  const auto body = EncodeToVector(s);
  const size_t before = 64 + 2 + 8 + 8 + sizeof(atr_status_reply_retention) + 8 + sizeof(atr_status_pool);
  REQUIRE(body.size() == before + 8 + 2 * sizeof(atr_status_device));
  const StatusReply out = RequireDecoded<StatusReply>(body);
  REQUIRE(out.devices.present);
  REQUIRE(out.devices.devices.size() == 2);
  CHECK(out.devices.devices[0].received == 10);
  CHECK(out.devices.devices[0].dropped_invalid == 1);
  CHECK(out.devices.devices[1].device_id == 1023);
  CHECK(out.devices.devices[1].reconnects == 4);
  CHECK(EncodeToVector(out) == body);
  const auto older = RequireDecoded<StatusReply>(std::span(body).first(before));
  CHECK(older.shares.present);
  CHECK_FALSE(older.devices.present);
  CHECK_FALSE(RequireDecoded<StatusReply>(std::span(body).first(body.size() - 1)).devices.present);
  auto bad_id = body;
  const uint32_t id = ATR_MAX_DEVICE_ID + 1;
  std::memcpy(bad_id.data() + before + 8, &id, 4);
  CHECK_FALSE(RequireDecoded<StatusReply>(bad_id).devices.present);
  auto reserved = body;
  reserved[before + 4] = 1;
  const auto r = RequireDecoded<StatusReply>(reserved);
  CHECK_FALSE(r.devices.present);
  CHECK(r.shares.present);
}

TEST_CASE("STATUS reply: the incomplete count follows the devices block and a body without it leaves it unknown",
          "[codec][reply][status]") {
  StatusReply s = SampleStatus();
  s.retention.present = true;
  s.shares.present = true;
  s.devices.present = true;
  s.devices.devices.push_back({0, 3, 10, 9, 1, 1, 0});
  s.incomplete_sent = true;
  s.incomplete_dirs = 7;
  const auto body = EncodeToVector(s);
  const StatusReply out = RequireDecoded<StatusReply>(body);
  CHECK(out.incomplete_sent);
  CHECK(out.incomplete_dirs == 7);
  CHECK(out.devices.devices.size() == 1);
  CHECK(EncodeToVector(out) == body);
  // An older daemon's body ends at the devices block; one cut inside the count is not half read.
  const auto older = RequireDecoded<StatusReply>(std::span(body).first(body.size() - 8));
  CHECK_FALSE(older.incomplete_sent);
  CHECK(older.incomplete_dirs == 0);
  CHECK(older.devices.present);
  CHECK(EncodeToVector(older) == std::vector<uint8_t>(body.begin(), body.end() - 8));
  CHECK_FALSE(RequireDecoded<StatusReply>(std::span(body).first(body.size() - 1)).incomplete_sent);
  // A later daemon's bytes after it are ignored.
  auto later = body;
  later.push_back(9);
  CHECK(RequireDecoded<StatusReply>(later).incomplete_dirs == 7);
}

ListEntry SampleEntry(uint64_t seq, std::string path) {
  ListEntry e;
  e.seq = seq;
  e.kind = ATR_EVENT_SCHEDULE;
  e.side = ATR_SIDE_DEVICE;
  e.device_id = 3;
  e.pid = 4321;
  e.uid = 1000;
  e.bytes = 1 << 20;
  e.created_unix_us = 1700000000000000ull;
  e.path = std::move(path);
  e.apparent_bytes = (1ull << 40) + seq;
  return e;
}

TEST_CASE("LIST reply: layout, round trip, rejections", "[codec][reply][list]") {
  ListReply in;
  in.entries.push_back(SampleEntry(1, "trace_1_2_20240131235959123456/1_event_2_x"));
  in.entries.push_back(SampleEntry(2, "trace_1_2_20240131235959123456/2_event_2_y"));
  in.entries[0].comm = "python3";  // the second's program is unknown: ""
  in.labels_sent = false;  // the labels' own test is below: this body ends at the flags
  const auto full = EncodeToVector(in);
  const size_t entry_size = 40 + 2 + in.entries[0].path.size();
  // The apparent sizes follow every entry, then the programs, then the flags.
  REQUIRE(full.size() == 8 + 2 * entry_size + 2 * 8 + (2 + 7) + 2 + 2 * 4);
  const ListReply with_apparent = RequireDecoded<ListReply>(full);
  CHECK(with_apparent.entries[0].apparent_bytes == (1ull << 40) + 1);
  CHECK(with_apparent.entries[1].apparent_bytes == (1ull << 40) + 2);
  CHECK(with_apparent.entries[1].path == in.entries[1].path);
  CHECK(with_apparent.entries[0].comm == "python3");
  CHECK(with_apparent.entries[1].comm.empty());
  CHECK(with_apparent.comm_sent);
  // Without the programs (an older daemon, or cut short): every one unknown, sizes kept.
  const std::vector<uint8_t> no_comm(full.begin(), full.end() - 8 - 11);
  const ListReply sized = RequireDecoded<ListReply>(no_comm);
  CHECK_FALSE(sized.comm_sent);
  CHECK(sized.entries[0].comm.empty());
  CHECK(sized.entries[1].apparent_bytes == (1ull << 40) + 2);
  CHECK(EncodeToVector(sized) == no_comm);
  CHECK(RequireDecoded<ListReply>(std::span(full).first(full.size() - 8 - 1)).entries[0].comm.empty());
  // A program that is not a name is not believed: none are.
  ListReply hostile = in;
  hostile.entries[1].comm = "../x";
  const ListReply doubted = RequireDecoded<ListReply>(EncodeToVector(hostile));
  CHECK_FALSE(doubted.comm_sent);
  CHECK(doubted.entries[0].comm.empty());
  // Without the sizes either: all fall back to `bytes`.
  const std::vector<uint8_t> body(full.begin(), full.end() - 8 - 16 - 11);
  CHECK(RequireDecoded<ListReply>(std::span(no_comm).first(no_comm.size() - 1)).entries[0].apparent_bytes == 1 << 20);
  // ...and re-encoding such a body gives it back, without sizes the daemon never sent.
  const ListReply older = RequireDecoded<ListReply>(body);
  CHECK_FALSE(older.apparent_sent);
  CHECK(EncodeToVector(older) == body);
  CHECK(std::vector<uint8_t>(body.begin(), body.begin() + 18) ==
        Bytes({2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1}));
  const ListReply out = RequireDecoded<ListReply>(body);
  REQUIRE(out.entries.size() == 2);
  CHECK(out.entries[1].seq == 2);
  CHECK(out.entries[1].kind == ATR_EVENT_SCHEDULE);
  CHECK(out.entries[1].side == ATR_SIDE_DEVICE);
  CHECK(out.entries[1].device_id == 3);
  CHECK(out.entries[1].pid == 4321);
  CHECK(out.entries[1].uid == 1000);
  CHECK(out.entries[1].bytes == 1 << 20);
  CHECK(out.entries[1].created_unix_us == 1700000000000000ull);
  CHECK(out.entries[1].path == in.entries[1].path);
  CHECK(out.entries[1].apparent_bytes == 1 << 20);

  CHECK(RequireDecoded<ListReply>(EncodeToVector(ListReply{})).entries.empty());

  SECTION("truncated entry") {
    RequireRejected<ListReply>(std::span(body).first(body.size() - 1), ATR_EBADMSG,
                               "entries[1].path");
    RequireRejected<ListReply>(std::span(body).first(8 + entry_size + 39), ATR_EBADMSG,
                               "entries[1]: truncated");
  }
  SECTION("count over the limit") {
    auto bad = body;
    bad[0] = 0x01;
    bad[1] = 0x04;  // 1025
    RequireRejected<ListReply>(bad, ATR_EINVAL, "count: 1025 out of range 0..1024");
  }
  SECTION("count larger than the body") {
    auto bad = body;
    bad[0] = 5;  // each entry takes at least 42 bytes; 5 * 42 > 168
    RequireRejected<ListReply>(bad, ATR_EBADMSG, "count: 5 entries cannot fit in 168 bytes");
  }
  SECTION("bad kind in the second entry") {
    auto bad = body;
    bad[8 + entry_size + 8] = 7;
    RequireRejected<ListReply>(bad, ATR_EINVAL, "entries[1].kind: 7 out of range");
  }
  SECTION("reserved") {
    auto bad = body;
    bad[4] = 1;
    RequireRejected<ListReply>(bad, ATR_EINVAL, "reserved");
    bad = body;
    bad[8 + 11] = 1;
    RequireRejected<ListReply>(bad, ATR_EINVAL, "entries[0].reserved");
  }
  SECTION("absolute path") {
    ListReply abs;
    abs.entries.push_back(SampleEntry(1, "/etc"));
    RequireRejected<ListReply>(EncodeToVector(abs), ATR_EINVAL, "entries[0].path: not relative");
  }
}

TEST_CASE("LIST reply: each entry's flags follow the programs and an older body has none", "[codec][reply][list]") {
  ListReply in;
  in.entries.push_back(SampleEntry(1, "trace_1_2_20240131235959123456/1_event_2_x"));
  in.entries.push_back(SampleEntry(2, "trace_1_2_20240131235959123456/2_event_2_y"));
  in.entries[0].comm = "python3";
  in.entries[1].flags = ATR_LIST_INCOMPLETE | 0x80000000u;  // a bit this reader does not know is kept
  in.labels_sent = false;  // a daemon from before the labels: the flags end the body
  const auto full = EncodeToVector(in);
  REQUIRE(std::vector<uint8_t>(full.end() - 8, full.end()) == Bytes({0, 0, 0, 0, 1, 0, 0, 0x80}));
  const ListReply out = RequireDecoded<ListReply>(full);
  CHECK(out.flags_sent);
  CHECK(out.entries[0].flags == 0);
  CHECK(out.entries[1].flags == (ATR_LIST_INCOMPLETE | 0x80000000u));
  CHECK(EncodeToVector(out) == full);
  // A body that ends at the programs (an older daemon), or cut inside the flags: none are read.
  for (size_t cut : {size_t{8}, size_t{1}}) {
    INFO("cut " << cut);
    const std::vector<uint8_t> body(full.begin(), full.end() - cut);
    const ListReply older = RequireDecoded<ListReply>(body);
    CHECK_FALSE(older.flags_sent);
    CHECK(older.entries[1].flags == 0);
    CHECK(older.entries[0].comm == "python3");
    if (cut == 8) CHECK(EncodeToVector(older) == body);
  }
  // Without believed programs the flags are not read either (they would not be in their place).
  ListReply hostile = in;
  hostile.entries[0].comm = "../x";
  const ListReply doubted = RequireDecoded<ListReply>(EncodeToVector(hostile));
  CHECK_FALSE(doubted.flags_sent);
  CHECK(doubted.entries[1].flags == 0);
}

TEST_CASE("LIST reply: each entry's labels follow the flags, an older or doubted body has none",
          "[codec][reply][list][labels]") {
  ListReply in;
  in.entries.push_back(SampleEntry(1, "trace_1_2_20240131235959123456/1_event_2_x"));
  in.entries.push_back(SampleEntry(2, "trace_1_2_20240131235959123456/2_event_2_y"));
  in.entries[1].labels = {"J1", "5", "6"};
  const auto full = EncodeToVector(in);
  // Entry 0's three empty strings, then entry 1's.
  REQUIRE(std::vector<uint8_t>(full.end() - 16, full.end()) ==
          Bytes({0, 0, 0, 0, 0, 0, 2, 0, 'J', '1', 1, 0, '5', 1, 0, '6'}));
  const ListReply out = RequireDecoded<ListReply>(full);
  CHECK(out.labels_sent);
  CHECK(out.entries[0].labels.empty());
  CHECK(out.entries[1].labels == Labels{"J1", "5", "6"});
  CHECK(EncodeToVector(out) == full);
  // An older daemon's body ends at the flags.
  ListReply older_in = in;
  older_in.labels_sent = false;
  const ListReply older = RequireDecoded<ListReply>(EncodeToVector(older_in));
  CHECK_FALSE(older.labels_sent);
  CHECK(older.entries[1].labels.empty());
  CHECK(older.entries[1].flags == 0);
  // A label that is not one (an escape sequence) is not believed: none of them are taken.
  ListReply hostile = in;
  hostile.entries[1].labels.job = "J\x1b[2J";
  const ListReply doubted = RequireDecoded<ListReply>(EncodeToVector(hostile));
  CHECK_FALSE(doubted.labels_sent);
  CHECK(doubted.entries[1].labels.empty());
}

TEST_CASE("LABELS request: layout, round trip, each label checked", "[codec][labels]") {
  const Labels in{"J1", "0", "8"};
  const auto payload = EncodeToVector(in);
  CHECK(payload == Bytes({2, 0, 'J', '1', 1, 0, '0', 1, 0, '8'}));
  Labels out;
  REQUIRE(Decode(payload, &out).ok());
  CHECK(out == in);
  CHECK(Decode(EncodeToVector(Labels{}), &out).ok());
  CHECK(out.empty());
  CHECK(Decode(EncodeToVector(Labels{"J", "00", ""}), &out).err() == EINVAL);
  CHECK(Decode(Bytes({2, 0, 'J'}), &out).err() == EBADMSG);
}

TEST_CASE("LABELS with a hang timeout: a fourth string, checked, and the three-label form unchanged", "[codec][labels][hang]") {
  const LabelsRequest in{{"J1", "0", "8"}, "2s"};
  const auto payload = EncodeToVector(in);
  CHECK(payload == Bytes({2, 0, 'J', '1', 1, 0, '0', 1, 0, '8', 2, 0, '2', 's'}));
  LabelsRequest out;
  REQUIRE(Decode(payload, &out).ok());
  CHECK(out.labels == in.labels);
  CHECK(out.hang_timeout == "2s");
  // Without one, the bytes are the three-label request an older daemon reads.
  CHECK(EncodeToVector(LabelsRequest{{"J1", "0", "8"}, ""}) == EncodeToVector(Labels{"J1", "0", "8"}));
  REQUIRE(Decode(EncodeToVector(Labels{"J1", "0", "8"}), &out).ok());
  CHECK(out.hang_timeout.empty());
  // An older daemon's decoder refuses the fourth string (why a client sends it only when granted).
  Labels three;
  CHECK(Decode(payload, &three).err() == EBADMSG);
  // Not a span, zero, too long, or something after it.
  // A span past what a millisecond count holds is not one either (a clear refusal, never a wrap).
  for (const char* bad : {"soon", "0", "0s", "5 min", "-1s", "106751991167301d", "99999999999999999999s"}) {
    CAPTURE(bad);
    const Status st = Decode(EncodeToVector(LabelsRequest{{"J1", "", ""}, bad}), &out);
    CHECK(st.err() == EINVAL);
    CHECK(st.message().find("hang_timeout") != std::string::npos);
  }
  CHECK(Decode(EncodeToVector(LabelsRequest{{"J1", "", ""}, std::string(65, '9')}), &out).err() == EINVAL);
  auto trailing = EncodeToVector(in);
  trailing.push_back(0);
  CHECK(Decode(trailing, &out).err() == EBADMSG);
  // Present but empty: not a form a client writes (it leaves the string out).
  auto empty = EncodeToVector(Labels{"J1", "0", "8"});
  empty.insert(empty.end(), {0, 0});
  CHECK(Decode(empty, &out).err() == EBADMSG);
  // A huge span is valid here: the daemon clamps it to its own hang-timeout.
  CHECK(Decode(EncodeToVector(LabelsRequest{{"", "", ""}, "99999d"}), &out).ok());
}

TEST_CASE("labels from the environment: the first set of each list", "[codec][labels]") {
  static std::map<std::string, std::string> env;
  auto get = [](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  env = {{"SLURM_JOB_ID", "77"}, {"JOB_ID", "x"}, {"RANK", "3"}, {"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"}};
  CHECK(LabelsFromEnvironment(get) == Labels{"77", "3", "16"});
  env = {{"ATRACE_JOB", "J1"}, {"SLURM_JOB_ID", "77"}, {"RANK_ID", "5"}, {"RANK", "3"}, {"RANK_SIZE", "6"},
         {"WORLD_SIZE", "8"}};
  CHECK(LabelsFromEnvironment(get) == Labels{"J1", "5", "6"});
  // A Kubernetes Indexed Job's pod: its completion index is its rank, after the launchers' own.
  env = {{"ATRACE_JOB", "train-7"}, {"JOB_COMPLETION_INDEX", "4"}};
  CHECK(LabelsFromEnvironment(get) == Labels{"train-7", "4", ""});
  env = {{"RANK", "2"}, {"JOB_COMPLETION_INDEX", "4"}};
  CHECK(LabelsFromEnvironment(get).rank == "2");
  env = {{"ATRACE_JOB", ""}, {"JOB_ID", "j"}};  // empty is not set
  CHECK(LabelsFromEnvironment(get) == Labels{"j", "", ""});
  CHECK(HangTimeoutFromEnvironment(get).empty());
  env = {{"ATRACE_HANG_TIMEOUT", "30s"}};
  CHECK(HangTimeoutFromEnvironment(get) == "30s");
}

TEST_CASE("labels from the environment, checked: a bad one is left out and named with its value, the others kept",
          "[codec][labels]") {
  static std::map<std::string, std::string> env;
  auto get = [](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  std::string refused;
  env = {{"ATRACE_JOB", "J1"}, {"RANK_ID", "-3"}, {"RANK_SIZE", "8"}};
  CHECK(CheckedLabelsFromEnvironment(get, &refused) == Labels{"J1", "", "8"});
  CHECK(refused == "RANK_ID='-3': rank: not a decimal from 0 to 2147483647");
  env = {{"SLURM_JOB_ID", "J\x1b]0;owned\x07"}, {"RANK", "2"}, {"WORLD_SIZE", "0"}};
  CHECK(CheckedLabelsFromEnvironment(get, &refused) == Labels{"", "2", ""});
  CHECK(refused.rfind("SLURM_JOB_ID='J\\x1b]0;owned\\x07': job: only letters", 0) == 0);
  CHECK(refused.find("; WORLD_SIZE='0': world_size: ") != std::string::npos);
  CHECK(refused.find('\x1b') == std::string::npos);
  env = {{"ATRACE_JOB", "J"}};
  CHECK(CheckedLabelsFromEnvironment(get, &refused) == Labels{"J", "", ""});
  CHECK(refused.empty());
}

TEST_CASE("VACUUM reply: layout, round trip, rejections", "[codec][reply][vacuum]") {
  const VacuumReply in{{"a/b", "c"}, 7};
  const auto body = EncodeToVector(in);
  CHECK(body == Bytes({2, 0, 0, 0, 7, 0, 0, 0, 3, 0, 'a', '/', 'b', 1, 0, 'c'}));
  const VacuumReply out = RequireDecoded<VacuumReply>(body);
  CHECK(out.paths == std::vector<std::string>{"a/b", "c"});
  CHECK(out.omitted == 7);

  RequireRejected<VacuumReply>(Bytes({0x01, 0x04, 0, 0, 0, 0, 0, 0}), ATR_EINVAL, "count");  // 1025 > the cap
  RequireRejected<VacuumReply>(Bytes({0x00, 0x04, 0, 0, 0, 0, 0, 0}), ATR_EBADMSG,
                               "count: 1024 paths cannot fit in 0 bytes");
  RequireRejected<VacuumReply>(std::span(body).first(15), ATR_EBADMSG, "paths[1]: length 1");
  RequireRejected<VacuumReply>(Bytes({1, 0, 0, 0, 0, 0, 0, 0, 1, 0, '/'}), ATR_EINVAL,
                               "paths[0]: not relative");
  RequireRejected<VacuumReply>(Bytes({0, 0, 0}), ATR_EBADMSG, "VACUUM reply: truncated");
}

TEST_CASE("VACUUM_BY reply: layout, round trip, rejections", "[codec][reply][vacuum]") {
  const VacuumByReply in{{"a/b"}, 2, 12288};
  const auto body = EncodeToVector(in);
  CHECK(body == Bytes({1, 0, 0, 0, 2, 0, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 3, 0, 'a', '/', 'b'}));
  const VacuumByReply out = RequireDecoded<VacuumByReply>(body);
  CHECK(out.paths == std::vector<std::string>{"a/b"});
  CHECK(out.omitted == 2);
  CHECK(out.bytes == 12288);
  RequireRejected<VacuumByReply>(std::span(body).first(15), ATR_EBADMSG, "VACUUM_BY reply: truncated");
  RequireRejected<VacuumByReply>(std::span(body).first(20), ATR_EBADMSG, "paths[0]: length 3");
  RequireRejected<VacuumByReply>(Bytes({1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), ATR_EINVAL, "count");
}

TEST_CASE("CRASH reply with the report's path", "[codec][reply][crash]") {
  const auto body = EncodeToVector(CrashReply{"/r/x.txt"});
  CHECK(body == Bytes({8, 0, '/', 'r', '/', 'x', '.', 't', 'x', 't'}));
  CHECK(RequireDecoded<CrashReply>(body).report == "/r/x.txt");
  CHECK(RequireDecoded<CrashReply>(Bytes({0, 0})).report.empty());  // none was written
  RequireRejected<CrashReply>(EncodeToVector(CrashReply{"x.txt"}), ATR_EINVAL, "report: not absolute");
  RequireRejected<CrashReply>(Bytes({}), ATR_EBADMSG, "report");
}

TEST_CASE("names of opcodes and statuses", "[codec]") {
  CHECK(OpcodeName(ATR_OP_VACUUM_BY) == "VACUUM_BY");
  CHECK(OpcodeName(ATR_OP_HELLO) == "HELLO");
  CHECK(OpcodeName(ATR_OP_VACUUM) == "VACUUM");
  CHECK(OpcodeName(0) == "UNKNOWN");
  CHECK(OpcodeName(ATR_OP_RING_REGISTER) == "RING_REGISTER");
  CHECK(OpcodeName(ATR_OP_GOODBYE) == "GOODBYE");
  CHECK(OpcodeName(ATR_OP_CRASH) == "CRASH");
  CHECK(OpcodeName(ATR_OP_DUMP) == "DUMP");
  CHECK(OpcodeName(ATR_OP_STACK_DUMP) == "STACK_DUMP");
  CHECK(OpcodeName(999) == "UNKNOWN");
  CHECK(StatusName(ATR_EBADMSG) == "EBADMSG");
  CHECK(StatusName(ATR_ESHUTDOWN) == "ESHUTDOWN");
  CHECK(StatusName(-74) == "EBADMSG");
  CHECK(StatusName(0) == "OK");
  CHECK(StatusName(-4) == "UNKNOWN");
}

}  // namespace
}  // namespace atraced::proto
