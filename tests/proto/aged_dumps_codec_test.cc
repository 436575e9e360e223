// AGED_DUMPS (ATR_FEATURE_AGED_DUMPS): the reply's entries, whose path and labels reach
// bundle.jsonl and hang's report: each field checked, a count the body cannot hold refused.
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

AgedDumpsReply Sample() {
  AgedDumpsReply reply;
  reply.omitted = 2;
  reply.entries = {
      {.aged_unix_us = 1765000000000000, .uid = 1000, .reason = ATR_AGED_BYTES, .flags = ATR_AGED_HANG,
       .path = "trace_5_5_20261207035000000000/schedule_event_5_20261207035000000001", .labels = {"J1", "3", "8"}},
      {.aged_unix_us = 1, .uid = 0, .reason = ATR_AGED_COUNT, .flags = ATR_AGED_EXPORTED,
       .path = "trace_6_6_20261207035000000000/schedule_event_6_20261207035000000001", .labels = {}},
  };
  return reply;
}

TEST_CASE("AGED_DUMPS reply: entries round trip, bytes a later daemon adds are ignored", "[codec][aged]") {
  const AgedDumpsReply reply = Sample();
  const auto body = EncodeToVector(reply);
  CHECK(body.size() == 8 + 2 * (16 + 8) + reply.entries[0].path.size() + 2 + 1 + 1 + reply.entries[1].path.size());
  const auto back = RequireDecoded<AgedDumpsReply>(body);
  CHECK(back.omitted == 2);
  CHECK(back.entries == reply.entries);
  auto longer = body;
  longer.push_back(9);
  CHECK(RequireDecoded<AgedDumpsReply>(longer).entries == reply.entries);
  // The request is LIST_LIVE's: the job or nothing.
  CHECK(EncodeToVector(ListLive{"J1"}) == Bytes({2, 0, 0, 0, 0, 0, 0, 0, 'J', '1'}));
}

TEST_CASE("AGED_DUMPS reply: a reason, flag, path or label that is not one is refused, naming it", "[codec][aged]") {
  const AgedDumpsReply reply = Sample();
  AgedDumpsReply hostile = reply;
  hostile.entries[0].reason = 5;
  RequireRejected<AgedDumpsReply>(EncodeToVector(hostile), ATR_EINVAL, "reason");
  hostile = reply;
  hostile.entries[0].flags = 0x4;
  RequireRejected<AgedDumpsReply>(EncodeToVector(hostile), ATR_EINVAL, "flags");
  hostile = reply;
  hostile.entries[0].path = "/etc/passwd";
  RequireRejected<AgedDumpsReply>(EncodeToVector(hostile), ATR_EINVAL, "path");
  hostile = reply;
  hostile.entries[0].labels.job = "J\x1b]52;c;x\x07";
  RequireRejected<AgedDumpsReply>(EncodeToVector(hostile), ATR_EBADMSG, "job");
  hostile = reply;
  hostile.entries[0].labels.rank = "-1";
  RequireRejected<AgedDumpsReply>(EncodeToVector(hostile), ATR_EBADMSG, "rank");
  auto reserved = EncodeToVector(reply);
  reserved[8 + 14] = 1;
  RequireRejected<AgedDumpsReply>(reserved, ATR_EINVAL, "reserved");
  auto cut = EncodeToVector(reply);
  cut.resize(cut.size() - 1);
  RequireRejected<AgedDumpsReply>(cut, ATR_EBADMSG, "world_size");
  // A count the body cannot hold is refused before anything is allocated for it.
  RequireRejected<AgedDumpsReply>(Bytes({0, 4, 0, 0, 0, 0, 0, 0}), ATR_EBADMSG, "count");
  RequireRejected<AgedDumpsReply>(Bytes({1, 4, 0, 0, 0, 0, 0, 0}), ATR_EINVAL, "count");
}

}  // namespace
}  // namespace atraced::proto
