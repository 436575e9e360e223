// Every byte written for a client counts (issue 21): what it writes through a passed
// descriptor after FILE_CLOSE, and what the daemon writes for it (ring saves).
#include <catch2/catch.hpp>

#include <unistd.h>

#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

uint64_t BytesWritten(ServiceFixture& f, TraceService::ClientId id) {
  proto::StatusReply s;
  REQUIRE(proto::Decode(f.Call(id, ATR_OP_STATUS, {}).body, &s).ok());
  return s.bytes_written;
}

}  // namespace

TEST_CASE("a passed file stays counted after FILE_CLOSE, and after its directory is aged until its holder closes it", "[service][bytes]") {
  ServiceLimits o;
  o.max_bytes_per_client = 256 * 1024;
  ServiceFixture f(o);
  auto id = f.Client(100);
  REQUIRE_FALSE(f.Begin(id, 1).empty());
  REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "passed"))).status == 0);
  UniqueFd fd;
  REQUIRE(f.Call(id, ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}), &fd).status == 0);
  REQUIRE(f.Call(id, ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1})).status == 0);
  REQUIRE(f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{1})).status == 0);
  const uint64_t before = BytesWritten(f, id);
  // The client keeps its descriptor and writes on, the daemon's copy long closed.
  const std::string chunk(64 * 1024, 'x');
  for (int i = 0; i < 4; ++i) REQUIRE(::write(fd.get(), chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
  f.service->Tick();
  CHECK(BytesWritten(f, id) >= before + 4 * chunk.size());
  // Counted against the process too: its next append passes max-bytes-per-client.
  REQUIRE_FALSE(f.Begin(id, 2).empty());
  REQUIRE(f.Call(id, ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(2, 1, "next"))).status == 0);
  CHECK(f.Call(id, ATR_OP_FILE_APPEND, Append1(100)).status == ATR_EBUSY);
  // Once the directory is aged the file is unlinked, but the descriptor keeps its blocks:
  // still watched and counted, held by its writer until it closes (issue 37).
  REQUIRE(f.Call(id, ATR_OP_EVENT_END, Payload(proto::IdRequest{2})).status == 0);
  auto other = f.Client(200);
  for (uint32_t e = 1; e <= 11; ++e) f.Event(other, e);
  const uint64_t aged = BytesWritten(f, other);
  REQUIRE(::write(fd.get(), chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
  f.service->Tick();
  CHECK(BytesWritten(f, other) >= aged + chunk.size());
  CHECK(f.store_->space().held() >= 5 * chunk.size());
  // Closed by its holder: released, and no longer watched.
  fd.reset();
  f.service->Tick();
  CHECK(f.store_->space().held() == 0);
}

TEST_CASE("max-bytes-per-client counts the ring saves the daemon writes for a process", "[service][bytes][rings]") {
  ServiceLimits o;
  // A save reserves the most its rings can format to (3 records of msg_size 64: 3 x 92
  // bytes, the lost-records line and the positions line, 517) and keeps what it wrote
  // (about 250).
  o.max_bytes_per_client = 600;
  ServiceFixture f(o);
  RingClient rings(f, 100);
  rings.Register(1, RingWith({std::string(40, 'a'), std::string(40, 'b'), std::string(40, 'c')}));
  const auto save_all = Payload(proto::RingSaveAll{true, 0});
  REQUIRE(f.Call(rings.id, ATR_OP_RING_SAVE_ALL, save_all).status == 0);  // about 200 bytes of text
  f.clock.Advance(std::chrono::milliseconds(2));
  auto second = f.Call(rings.id, ATR_OP_RING_SAVE_ALL, save_all);
  CHECK(second.status == ATR_EBUSY);
  CHECK(second.message.find("max-bytes-per-client 600") != std::string::npos);
  CHECK(KindDirs(f, "schedule").size() == 1);  // refused whole: no half-written dir
  // GOODBYE's exit save counts too.
  CHECK(f.Call(rings.id, ATR_OP_GOODBYE, {}).status == 0);  // no exitSave object: nothing to write
  CHECK(f.service->counters().refused_client_bytes == 1);
}
