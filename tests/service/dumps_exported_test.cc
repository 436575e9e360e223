// DUMPS_EXPORTED: the feature it needs, garbage refused, and whose dumps a peer may release
// (as LIST decides who reads a directory); STATUS's dump counts.
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

TraceService::ClientId Exporter(ServiceFixture& f, int32_t pid, uint32_t uid) {
  return f.ClientWith(pid, uid, ATR_FEATURE_DUMPS_EXPORTED);
}

// A dump directory of `uid`'s process `pid`, made as PROCESS_DUMP makes one; its relative path.
std::string DumpOf(ServiceFixture& f, int32_t pid, uint32_t uid) {
  f.clock.Advance(std::chrono::milliseconds(1));
  EventSpec spec{{pid, pid, "20260101000000000000"}, EventKind::kSchedule, pid, "", Side::kHost, 0, uid, ""};
  spec.dump = DumpKind::kOperator;
  auto r = f.store_->BeginEvent(spec);
  REQUIRE(r.ok());
  REQUIRE(f.store_->OpenFile(r->seq, TraceFileName::Object({"schedule", "x", false})).ok());
  f.store_->EndEvent(r->seq);
  return r->rel_path;
}

proto::DumpsExportedReply Release(ServiceFixture& f, TraceService::ClientId id, std::vector<std::string> paths) {
  const auto reply = f.Call(id, ATR_OP_DUMPS_EXPORTED, Payload(proto::DumpsExported{std::move(paths)}));
  REQUIRE(reply.status == 0);
  proto::DumpsExportedReply r;
  REQUIRE(proto::Decode(reply.body, &r).ok());
  return r;
}

proto::StatusReply StatusOf(ServiceFixture& f, TraceService::ClientId id) {
  const auto reply = f.Call(id, ATR_OP_STATUS, {});
  REQUIRE(reply.status == 0);
  proto::StatusReply s;
  REQUIRE(proto::Decode(reply.body, &s).ok());
  return s;
}

}  // namespace

TEST_CASE("DUMPS_EXPORTED needs its feature, and garbage is refused", "[service][dumps_exported]") {
  ServiceFixture f;
  const auto plain = f.Client(200);
  const auto path = DumpOf(f, 100, 1000);
  CHECK(f.Call(plain, ATR_OP_DUMPS_EXPORTED, Payload(proto::DumpsExported{{path}})).status == ATR_ENOTSUP);
  const auto id = Exporter(f, 201, 1000);
  CHECK(f.Call(id, ATR_OP_DUMPS_EXPORTED, {1, 2, 3}).status == ATR_EBADMSG);
  CHECK(f.Call(id, ATR_OP_DUMPS_EXPORTED, Payload(proto::DumpsExported{})).status == ATR_EINVAL);
  CHECK(f.Call(id, ATR_OP_DUMPS_EXPORTED, Payload(proto::DumpsExported{{"/" + path}})).status == ATR_EINVAL);
  CHECK(StatusOf(f, id).dumps_kept == 1);  // nothing released by any of them
}

TEST_CASE("DUMPS_EXPORTED: a user releases its own dumps only, root and the reader group any, and STATUS counts them",
          "[service][dumps_exported][security]") {
  ServiceFixture f;
  const auto mine = DumpOf(f, 100, 1000), theirs = DumpOf(f, 101, 2000), more = DumpOf(f, 102, 2000);
  const auto user = Exporter(f, 300, 1000);
  CHECK(StatusOf(f, user).dumps_sent);
  CHECK(StatusOf(f, user).dumps_kept == 3);
  CHECK(StatusOf(f, user).dumps_aged_early == 0);
  // Another user's path is skipped exactly as a path of nothing: the reply tells them apart not.
  const auto refused = Release(f, user, {theirs, "trace_1_1_20260101000000000000/none"});
  CHECK(refused.released == 0);
  CHECK(refused.skipped == 2);
  CHECK(StatusOf(f, user).dumps_kept == 3);
  const auto own = Release(f, user, {mine, theirs});
  CHECK(own.released == 1);
  CHECK(own.skipped == 1);
  CHECK(StatusOf(f, user).dumps_kept == 2);
  CHECK(Release(f, user, {mine}).released == 0);  // once
  CHECK(f.log.Has(LogLevel::kInfo, "export: uid 1000 exported 1 dump dir(s)"));
  // Root reads every user's: it may release them.
  const auto root = Exporter(f, 301, 0);
  CHECK(Release(f, root, {theirs, more}).released == 2);
  CHECK(StatusOf(f, root).dumps_kept == 0);
  // Nothing over record-num 10: the released dumps stay until the count asks for them.
  CHECK(f.store_->count(AgeClass::kHost) == 3);
}
