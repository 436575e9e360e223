// DUMPS_EXPORTED (ATR_FEATURE_DUMPS_EXPORTED): the request's layout and every rejection rule,
// the reply, and STATUS's dump counts after incomplete_dirs.
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

TEST_CASE("DUMPS_EXPORTED: count, reserved, then the relative paths, round trip", "[codec][dumps_exported]") {
  const DumpsExported in{{"trace_1_1_20260101000000000000/schedule_event_1_20260101000000000001", "a/b"}};
  const auto payload = EncodeToVector(in);
  CHECK(payload.size() == 8 + 2 + in.paths[0].size() + 2 + 3);
  CHECK(payload[0] == 2);
  CHECK(RequireDecoded<DumpsExported>(payload).paths == in.paths);
}

TEST_CASE("DUMPS_EXPORTED: garbage is refused, naming the field", "[codec][dumps_exported]") {
  RequireRejected<DumpsExported>(Bytes({1, 0, 0}), ATR_EBADMSG, "DUMPS_EXPORTED");
  RequireRejected<DumpsExported>(EncodeToVector(DumpsExported{}), ATR_EINVAL, "count");  // none
  auto reserved = EncodeToVector(DumpsExported{{"a/b"}});
  reserved[4] = 1;
  RequireRejected<DumpsExported>(reserved, ATR_EINVAL, "reserved");
  RequireRejected<DumpsExported>(EncodeToVector(DumpsExported{{"/etc/passwd"}}), ATR_EINVAL, "path");
  RequireRejected<DumpsExported>(EncodeToVector(DumpsExported{{""}}), ATR_EINVAL, "path");
  auto trailing = EncodeToVector(DumpsExported{{"a/b"}});
  trailing.push_back(0);
  RequireRejected<DumpsExported>(trailing, ATR_EBADMSG, "after the last path");
  auto short_count = EncodeToVector(DumpsExported{{"a/b", "c/d"}});
  short_count[0] = 3;  // says three, holds two
  RequireRejected<DumpsExported>(short_count, ATR_EBADMSG, "path");
  std::vector<std::string> too_many(ATR_MAX_LIST_ENTRIES + 1, "a/b");
  RequireRejected<DumpsExported>(EncodeToVector(DumpsExported{too_many}), ATR_EINVAL, "count");
}

TEST_CASE("DUMPS_EXPORTED reply: released and skipped, later bytes ignored", "[codec][dumps_exported]") {
  auto body = EncodeToVector(DumpsExportedReply{3, 2});
  CHECK(body.size() == 8);
  body.push_back(7);
  const auto r = RequireDecoded<DumpsExportedReply>(body);
  CHECK(r.released == 3);
  CHECK(r.skipped == 2);
  DumpsExportedReply cut;
  CHECK_FALSE(Decode(std::span(body).first(6), &cut).ok());
}

TEST_CASE("STATUS reply: the dump counts follow incomplete_dirs, and a body without them does not say",
          "[codec][reply][status][dumps_exported]") {
  StatusReply s;
  s.root = "/var/lib/atraced";
  s.retention.present = true;
  s.shares.present = true;
  s.devices.present = true;
  s.incomplete_sent = true;
  s.incomplete_dirs = 1;
  s.dumps_sent = true;
  s.dumps_kept = 12;
  s.dumps_aged_early = 2;
  const auto body = EncodeToVector(s);
  const StatusReply out = RequireDecoded<StatusReply>(body);
  CHECK(out.dumps_sent);
  CHECK(out.dumps_kept == 12);
  CHECK(out.dumps_aged_early == 2);
  CHECK(EncodeToVector(out) == body);
  // A daemon without them ends at incomplete_dirs; one cut inside them is not half read.
  for (size_t cut : {16u, 8u, 1u}) {
    CAPTURE(cut);
    const auto older = RequireDecoded<StatusReply>(std::span(body).first(body.size() - cut));
    CHECK_FALSE(older.dumps_sent);
    CHECK(older.dumps_kept == 0);
    CHECK(older.dumps_aged_early == 0);
    CHECK(older.incomplete_dirs == 1);
  }
}

}  // namespace
}  // namespace atraced::proto
