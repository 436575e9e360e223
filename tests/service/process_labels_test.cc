// LABELS: the job, rank and world size a process sends, on the directories made for it.
#include <catch2/catch.hpp>

#include "service/service_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

TraceService::ClientId LabelsClient(ServiceFixture& f, int32_t pid) {
  auto id = f.Client(pid, 1000, 1000, /*hello=*/false);
  proto::Hello h;
  h.features = ATR_FEATURE_FD_PASSING | ATR_FEATURE_LABELS;
  auto r = f.Call(id, ATR_OP_HELLO, Payload(h));
  REQUIRE(r.status == 0);
  proto::HelloReply hr;
  REQUIRE(proto::Decode(r.body, &hr).ok());
  CHECK((hr.features & ATR_FEATURE_LABELS) != 0);
  return id;
}

std::vector<proto::ListEntry> List(ServiceFixture& f, TraceService::ClientId id) {
  auto r = f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{0, 100}));
  REQUIRE(r.status == 0);
  proto::ListReply list;
  REQUIRE(proto::Decode(r.body, &list).ok());
  CHECK(list.labels_sent);
  return list.entries;
}

}  // namespace

TEST_CASE("LABELS: the directories made after it carry the labels, in LIST", "[service][labels]") {
  ServiceFixture f;
  auto id = LabelsClient(f, 100);
  f.Event(id, 1);  // before: none
  REQUIRE(f.Call(id, ATR_OP_LABELS, Payload(proto::Labels{"J1", "3", "8"})).status == 0);
  f.Event(id, 2);
  auto entries = List(f, id);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].labels.empty());
  CHECK(entries[1].labels == proto::Labels{"J1", "3", "8"});
  CHECK(f.log.Has(LogLevel::kInfo, "pid 100 labels: job 'J1' rank '3' world size '8'"));
}

TEST_CASE("LABELS: another connection of the process, then or later, labels its directories too",
          "[service][labels]") {
  ServiceFixture f;
  auto first = LabelsClient(f, 100);
  auto before = f.Client(100);
  REQUIRE(f.Call(first, ATR_OP_LABELS, Payload(proto::Labels{"J1", "0", ""})).status == 0);
  auto after = f.Client(100);
  f.Event(before, 1);
  f.Event(after, 2);
  auto other = f.Client(200);  // another process: its own word, none
  f.Event(other, 3);
  auto entries = List(f, first);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].labels == proto::Labels{"J1", "0", ""});
  CHECK(entries[1].labels == proto::Labels{"J1", "0", ""});
  CHECK(entries[2].labels.empty());
}

TEST_CASE("LABELS: a bad label refuses them all, named, and nothing is recorded", "[service][labels][security]") {
  ServiceFixture f;
  auto id = LabelsClient(f, 100);
  struct Bad {
    proto::Labels labels;
    std::string message;
  };
  for (const Bad& bad : {Bad{{"J\x1b]0;pwned\x07", "1", "2"}, "job: only letters, digits and . _ : @ + = - are allowed"},
                         Bad{{std::string(65, 'j'), "1", "2"}, "job: 65 bytes, longer than 64"},
                         Bad{{"J", "-1", "2"}, "rank: not a decimal from 0 to 2147483647"},
                         Bad{{"J", "2147483648", "2"}, "rank: not a decimal from 0 to 2147483647"},
                         Bad{{"J", "1", "0"}, "world_size: not a decimal from 1 to 2147483647"},
                         Bad{{"J", "1", "8\n"}, "world_size: not a decimal from 1 to 2147483647"}}) {
    auto r = f.Call(id, ATR_OP_LABELS, Payload(bad.labels));
    CHECK(r.status == ATR_EINVAL);
    CHECK(r.message == bad.message);
  }
  std::vector<uint8_t> trailing = Payload(proto::Labels{"J", "1", "2"});
  trailing.push_back(0);
  CHECK(f.Call(id, ATR_OP_LABELS, trailing).status == ATR_EBADMSG);
  CHECK(f.Call(id, ATR_OP_LABELS, {1}).status == ATR_EBADMSG);
  f.Event(id, 1);
  auto entries = List(f, id);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].labels.empty());
  // The connection goes on.
  CHECK(f.Call(id, ATR_OP_LABELS, Payload(proto::Labels{"J", "1", "2"})).status == 0);
}

TEST_CASE("LABELS without the feature bit is refused", "[service][labels]") {
  ServiceFixture f;
  auto id = f.Client(100);  // HELLO without ATR_FEATURE_LABELS
  auto r = f.Call(id, ATR_OP_LABELS, Payload(proto::Labels{"J", "1", "2"}));
  CHECK(r.status == ATR_ENOTSUP);
  CHECK(r.message == "LABELS: ATR_FEATURE_LABELS was not negotiated in HELLO");
}

TEST_CASE("LABELS: a process relabelling in a loop gets one log line per interval, with a count", "[service][labels]") {
  ServiceFixture f;
  auto id = LabelsClient(f, 100);
  auto other = LabelsClient(f, 200);  // another process of the same uid shares the throttle
  for (int i = 0; i < 10000; ++i) {
    REQUIRE(f.Call(i % 2 ? other : id, ATR_OP_LABELS, Payload(proto::Labels{"J" + std::to_string(i), "0", ""})).status == 0);
  }
  CHECK(f.log.Count(LogLevel::kInfo, " labels: job ") == 1);
  CHECK(f.log.Has(LogLevel::kInfo, "pid 100 labels: job 'J0' rank '0' world size ''"));
  // Every relabel was applied all the same: the last one labels the next directory.
  f.Event(other, 1);
  // An interval later, the next one is logged with the count of those that were not.
  f.clock.Advance(std::chrono::seconds(11));
  REQUIRE(f.Call(id, ATR_OP_LABELS, Payload(proto::Labels{"last", "1", "2"})).status == 0);
  CHECK(f.log.Count(LogLevel::kInfo, " labels: job ") == 2);
  CHECK(f.log.Has(LogLevel::kInfo, "pid 100 labels: job 'last' rank '1' world size '2' (9999 more LABELS of uid 1000 "
                                   "accepted since its last line)"));
  auto r = f.Call(id, ATR_OP_LIST, Payload(proto::ListRequest{0, 100}));
  proto::ListReply list;
  REQUIRE(proto::Decode(r.body, &list).ok());
  REQUIRE(list.entries.size() == 1);
  CHECK(list.entries[0].labels.job == "J9999");
}
