// LIST_LIVE (ATR_FEATURE_LIST_LIVE): the request's layout and every rejection rule, and the
// reply's entries, whose strings are the processes' word and checked as LIST's are.
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

TEST_CASE("LIST_LIVE: an 8-byte head, then the job, round trip", "[codec][list_live]") {
  CHECK(EncodeToVector(ListLive{}) == Bytes({0, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(RequireDecoded<ListLive>(Bytes({0, 0, 0, 0, 0, 0, 0, 0})).job.empty());
  const auto payload = EncodeToVector(ListLive{"J1"});
  CHECK(payload == Bytes({2, 0, 0, 0, 0, 0, 0, 0, 'J', '1'}));
  CHECK(RequireDecoded<ListLive>(payload).job == "J1");
}

TEST_CASE("LIST_LIVE: garbage is refused, naming the field", "[codec][list_live]") {
  RequireRejected<ListLive>(Bytes({0, 0, 0}), ATR_EBADMSG, "LIST_LIVE");
  RequireRejected<ListLive>(Bytes({0, 0, 0, 0, 0, 0, 0, 1}), ATR_EINVAL, "reserved");
  RequireRejected<ListLive>(Bytes({3, 0, 0, 0, 0, 0, 0, 0, 'J', '1'}), ATR_EBADMSG, "job_len says 11");
  RequireRejected<ListLive>(Bytes({1, 0, 0, 0, 0, 0, 0, 0, 'J', '1'}), ATR_EBADMSG, "job_len says 9");
  RequireRejected<ListLive>(Bytes({65, 0, 0, 0, 0, 0, 0, 0}), ATR_EINVAL, "job_len");
  RequireRejected<ListLive>(EncodeToVector(ListLive{"J\x1b[2J"}), ATR_EINVAL, "job: only letters");
}

TEST_CASE("LIST_LIVE reply: entries with their labels, a label or program that is not one refused",
          "[codec][list_live]") {
  ListLiveReply reply;
  reply.omitted = 4;
  LiveEntry e;
  e.pid = 42;
  e.uid = 1000;
  e.flags = ATR_LIVE_WATCHED | ATR_LIVE_STALLED | ATR_LIVE_BUSY;
  e.rings = 3;
  e.last_moved_unix_us = 1765000000000000;
  e.still_ms = 301000;
  e.timeout_ms = 300000;
  e.comm = "python3";
  e.labels = {"J1", "5", "8"};
  reply.entries = {e, LiveEntry{7, 0, ATR_LIVE_NEVER_WROTE | 0x80000000u, 1, 0, 0, 0, "", {}}};
  const auto body = EncodeToVector(reply);
  CHECK(body.size() == 8 + 2 * (40 + 8) + 7 + 2 + 1 + 1);
  const auto back = RequireDecoded<ListLiveReply>(body);
  REQUIRE(back.entries.size() == 2);
  CHECK(back.omitted == 4);
  CHECK(back.entries[0].flags == e.flags);
  CHECK(back.entries[0].still_ms == 301000);
  CHECK(back.entries[0].last_moved_unix_us == e.last_moved_unix_us);
  CHECK(back.entries[0].labels == e.labels);
  CHECK(back.entries[0].comm == "python3");
  CHECK(back.entries[1].flags == (ATR_LIVE_NEVER_WROTE | 0x80000000u));  // unknown bits kept, ignored
  // Bytes after what a reader knows are a later daemon's: ignored.
  auto longer = body;
  longer.push_back(9);
  CHECK(RequireDecoded<ListLiveReply>(longer).entries.size() == 2);

  ListLiveReply hostile = reply;
  hostile.entries[0].labels.job = "J\x1b]52;c;x\x07";
  RequireRejected<ListLiveReply>(EncodeToVector(hostile), ATR_EBADMSG, "job");
  hostile = reply;
  hostile.entries[0].labels.rank = "-1";
  RequireRejected<ListLiveReply>(EncodeToVector(hostile), ATR_EBADMSG, "rank");
  hostile = reply;
  hostile.entries[0].comm = "a/b";
  RequireRejected<ListLiveReply>(EncodeToVector(hostile), ATR_EINVAL, "comm");
  hostile = reply;
  hostile.entries[0].pid = 0;
  RequireRejected<ListLiveReply>(EncodeToVector(hostile), ATR_EINVAL, "pid");
  auto cut = body;
  cut.resize(body.size() - 1);
  RequireRejected<ListLiveReply>(cut, ATR_EBADMSG, "world_size");
  // A count the body cannot hold is refused before anything is allocated for it.
  RequireRejected<ListLiveReply>(Bytes({0, 4, 0, 0, 0, 0, 0, 0}), ATR_EBADMSG, "count");
  RequireRejected<ListLiveReply>(Bytes({1, 4, 0, 0, 0, 0, 0, 0}), ATR_EINVAL, "count");
}

}  // namespace
}  // namespace atraced::proto
