// AGED_DUMPS: the feature it needs, garbage refused, one job's or every one's, and whose aged
// dumps a peer sees (as LIST decides who reads a directory).
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

// A dump directory of `uid`'s process `pid` with its labels, made as PROCESS_DUMP makes one.
std::string LabelledDumpOf(ServiceFixture& f, int32_t pid, uint32_t uid, proto::Labels labels) {
  f.clock.Advance(std::chrono::milliseconds(1));
  EventSpec spec{{pid, pid, "20260101000000000000"}, EventKind::kSchedule, pid, "", Side::kHost, 0, uid, ""};
  spec.dump = DumpKind::kHang;
  spec.labels = std::move(labels);
  auto r = f.store_->BeginEvent(spec);
  REQUIRE(r.ok());
  REQUIRE(f.store_->OpenFile(r->seq, TraceFileName::Object({"schedule", "x", false})).ok());
  f.store_->EndEvent(r->seq);
  return r->rel_path;
}

proto::AgedDumpsReply Aged(ServiceFixture& f, TraceService::ClientId id, const std::string& job) {
  const auto reply = f.Call(id, ATR_OP_AGED_DUMPS, Payload(proto::ListLive{job}));
  REQUIRE(reply.status == 0);
  proto::AgedDumpsReply r;
  REQUIRE(proto::Decode(reply.body, &r).ok());
  return r;
}

}  // namespace

TEST_CASE("AGED_DUMPS: the aged dumps a peer may see, one job's or all, with why and when, another user's unseen",
          "[service][aged][security]") {
  ServiceFixture f;
  const std::string mine = LabelledDumpOf(f, 100, 1000, {"J1", "3", "8"});
  const std::string theirs = LabelledDumpOf(f, 101, 2000, {"J2", "0", "2"});
  LabelledDumpOf(f, 102, 1000, {"J1", "4", "8"});  // the newest: stays
  const auto plain = f.Client(200);
  CHECK(f.Call(plain, ATR_OP_AGED_DUMPS, Payload(proto::ListLive{})).status == ATR_ENOTSUP);
  const auto user = f.ClientWith(300, 1000, ATR_FEATURE_AGED_DUMPS);
  CHECK(f.Call(user, ATR_OP_AGED_DUMPS, {1, 2, 3}).status == ATR_EBADMSG);
  CHECK(f.Call(user, ATR_OP_AGED_DUMPS, Payload(proto::ListLive{"a b"})).status == ATR_EINVAL);
  CHECK(Aged(f, user, "").entries.empty());  // nothing aged yet

  // dump-keep off and record-num 1: the count takes the two oldest dumps.
  f.store_->SetDumpKeep(std::chrono::seconds(0));
  f.store_->SetRecordNum(1);
  REQUIRE(f.store_->aged_dumps().size() == 2);
  const auto own = Aged(f, user, "");
  REQUIRE(own.entries.size() == 1);  // uid 2000's is not theirs, and not counted
  CHECK(own.omitted == 0);
  CHECK(own.entries[0].path == mine);
  CHECK(own.entries[0].uid == 1000);
  CHECK(own.entries[0].reason == ATR_AGED_COUNT);
  CHECK(own.entries[0].flags == ATR_AGED_HANG);
  CHECK(own.entries[0].labels == proto::Labels{"J1", "3", "8"});
  CHECK(own.entries[0].aged_unix_us > 0);
  CHECK(Aged(f, user, "J2").entries.empty());
  // Root reads every user's: both, or one job's.
  const auto root = f.ClientWith(301, 0, ATR_FEATURE_AGED_DUMPS);
  CHECK(Aged(f, root, "").entries.size() == 2);
  const auto j2 = Aged(f, root, "J2");
  REQUIRE(j2.entries.size() == 1);
  CHECK(j2.entries[0].path == theirs);
}
