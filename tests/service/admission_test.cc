// Admission: the per-process rate limit and max-bytes-per-client.
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("the rate limit refuses a process's events over its burst with EAGAIN, exit events have their own bucket",
          "[service][rate]") {
  ServiceLimits o;
  o.rate_limit = RateLimit{std::chrono::seconds(10), 3};
  ServiceFixture f(o);
  auto a = f.Client(100);
  auto a2 = f.Client(100);  // the same process on a second connection shares its buckets
  auto b = f.Client(200);
  int32_t status = 0;
  std::string message;
  CHECK_FALSE(f.Begin(a, 1).empty());
  CHECK_FALSE(f.Begin(a2, 2).empty());
  CHECK_FALSE(f.Begin(a, 3).empty());
  CHECK(f.Begin(a2, 4, ATR_SIDE_HOST, 0, &status, &message).empty());
  CHECK(status == ATR_EAGAIN);
  CHECK(message.find("rate-limit-burst 3") != std::string::npos);
  CHECK(f.Begin(a, 5, ATR_SIDE_HOST, 0, &status).empty());
  CHECK(f.service->counters().refused_rate_limit == 2);
  // Another process is not affected.
  CHECK_FALSE(f.Begin(b, 1).empty());
  // Exit events still go through: their bucket is another.
  auto exit_req = BeginRequest(9, ATR_EVENT_EXIT);
  CHECK(f.Call(a, ATR_OP_EVENT_BEGIN, Payload(exit_req)).status == 0);
  // Refusals are not logged one by one; the tick sums them up once the interval passed.
  CHECK_FALSE(f.log.Has(LogLevel::kNotice, "refused EVENT_BEGIN"));
  f.service->Tick();
  CHECK_FALSE(f.log.Has(LogLevel::kWarning, "suppressed"));
  f.clock.Advance(std::chrono::seconds(11));
  f.service->Tick();
  CHECK(f.log.Has(LogLevel::kWarning, "suppressed 2 events from pid 100 (app)"));
  // Refilled: the process may create events again.
  CHECK_FALSE(f.Begin(a, 6).empty());
}

TEST_CASE("max-bytes-per-client refuses the append that would pass it with EBUSY", "[service][rate]") {
  // The bound is on disk: what the appends take in whole blocks (a 4 KiB block file system:
  // two blocks).
  ServiceLimits o;
  o.max_bytes_per_client = 8192;
  ServiceFixture f(o);
  REQUIRE(BlockSize(f.tmp.path()) == 4096);
  auto a = f.Client(100);
  REQUIRE_FALSE(f.Begin(a, 1).empty());
  REQUIRE(f.Call(a, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "obj"))).status == 0);
  CHECK(f.Call(a, ATR_OP_FILE_APPEND, Append1(60)).status == 0);  // its first block
  auto r = f.Call(a, ATR_OP_FILE_APPEND, Append1(4097));
  CHECK(r.status == ATR_EBUSY);
  CHECK(r.message.find("max-bytes-per-client 8192") != std::string::npos);
  CHECK(f.Call(a, ATR_OP_FILE_APPEND, Append1(4096)).status == 0);  // the second
  CHECK(f.service->counters().refused_client_bytes == 1);
  // A second connection of the same process shares the bound.
  auto a2 = f.Client(100);
  REQUIRE_FALSE(f.Begin(a2, 1).empty());
  REQUIRE(f.Call(a2, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "obj2"))).status == 0);
  CHECK(f.Call(a2, ATR_OP_FILE_APPEND, Append1(1)).status == ATR_EBUSY);
}

TEST_CASE("new per-client limits apply at once", "[service][rate]") {
  ServiceFixture f;
  auto a = f.Client(100);
  f.service->ApplyLimits(Limits(RateLimit{std::chrono::seconds(60), 1}, 0));
  CHECK_FALSE(f.Begin(a, 1).empty());
  int32_t status = 0;
  CHECK(f.Begin(a, 2, ATR_SIDE_HOST, 0, &status).empty());
  CHECK(status == ATR_EAGAIN);
  f.service->ApplyLimits(Limits(RateLimit{std::chrono::seconds(0), 1}, 0));
  CHECK_FALSE(f.Begin(a, 3).empty());
}

TEST_CASE("a flood of refused requests from one uid is one log line, and another uid's refusal is still logged",
          "[service][refusals]") {
  ServiceFixture f;
  const auto flooder = f.Client(100, 1000, 1000);
  for (int i = 0; i < 1000; ++i) {
    CHECK(f.Call(flooder, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{77})).status == ATR_ENOENT);
  }
  CHECK(f.log.Count(LogLevel::kNotice, "refused FILE_CLOSE from pid 100 uid 1000") == 1);
  CHECK(f.service->counters().requests_refused == 1000);  // every one counted
  const auto other = f.Client(200, 2000, 2000);
  CHECK(f.Call(other, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{77})).status == ATR_ENOENT);
  CHECK(f.log.Count(LogLevel::kNotice, "refused FILE_CLOSE from pid 200 uid 2000") == 1);
}
