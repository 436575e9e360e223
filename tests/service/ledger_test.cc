// The collective ledger held like a ring (ATR_RING_LEDGER, issue 52): only with its feature
// bit, checked against its registration, and saved as hccl_tracer_ledger.bin with every save of
// the connection's rings, whichever rings the save names.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "atraced/proto/ledger_reader.h"
#include "atraced/proto/ledger_summary.h"
#include "atraced/rings/held_ring.h"
#include "service/ring_fixture.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

constexpr uint32_t kRecords = 8;

// A sealed memfd holding a ledger of kRecords slots with `calls` AllReduces on "world".
UniqueFd LedgerWith(uint64_t calls, uint32_t header_records = kRecords) {
  const auto bytes = static_cast<off_t>(ATR_LEDGER_BYTES(kRecords));
  UniqueFd fd(::memfd_create("ledger", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  REQUIRE(fd.valid());
  REQUIRE(::ftruncate(fd.get(), bytes) == 0);
  atr_ledger_header h{};
  h.magic = ATR_LEDGER_MAGIC;
  h.version = ATR_LEDGER_VERSION;
  h.header_size = ATR_LEDGER_HEADER_SIZE;
  h.record_count = header_records;
  h.record_size = ATR_LEDGER_RECORD_SIZE;
  h.write_index = calls;
  REQUIRE(::pwrite(fd.get(), &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h));
  for (uint64_t k = 0; k < calls; ++k) {
    atr_ledger_record r{};
    r.seq_done = r.seq_start = k + 1;
    r.comm_seq = k + 1;
    r.count = 64;
    r.rank = 1;
    r.size = 2;
    r.peer = ATR_LEDGER_NO_PEER;
    r.op = ATR_LEDGER_OP_ALL_REDUCE;
    r.comm_len = 5;
    std::memcpy(r.comm, "world", 5);
    REQUIRE(::pwrite(fd.get(), &r, sizeof r, static_cast<off_t>(ATR_LEDGER_HEADER_SIZE + k * sizeof r)) ==
            static_cast<ssize_t>(sizeof r));
  }
  REQUIRE(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  return fd;
}

proto::RingRegister LedgerRegistration(uint32_t id) {
  proto::RingRegister m;
  m.object_id = id;
  m.flags = ATR_RING_LEDGER | ATR_RING_EXIT_SAVE;
  m.msg_num = kRecords;
  m.msg_size = ATR_LEDGER_RECORD_SIZE;
  m.ring_bytes = static_cast<uint32_t>(ATR_LEDGER_BYTES(kRecords));
  m.name = "hccl";
  return m;
}

std::vector<uint8_t> LedgerRegister(uint32_t id) { return Payload(LedgerRegistration(id)); }

struct LedgerClient {
  ServiceFixture& f;
  TraceService::ClientId id;
  LedgerClient(ServiceFixture& fixture, uint64_t features) : f(fixture) {
    id = f.service->Connect({100, 1000, 1000});
    proto::Hello h;
    h.features = features;
    REQUIRE(f.Call(id, ATR_OP_HELLO, Payload(h)).status == 0);
  }
  int32_t Register(const std::vector<uint8_t>& payload, UniqueFd fd) {
    ReplyBatch batch;
    proto::FrameHeader fh{static_cast<uint32_t>(payload.size()), ATR_OP_RING_REGISTER, 0, ++f.request_id};
    f.service->Handle(id, fh, payload, batch, std::move(fd));
    return ServiceFixture::Decode(batch).at(0).status;
  }
};

proto::LedgerSnapshot SavedLedger(const std::string& dir) {
  proto::LedgerSnapshot snap;
  std::string why;
  REQUIRE(proto::ReadLedgerFile(dir + "/" + std::string(proto::kLedgerFileName), &snap, &why));
  return snap;
}

}  // namespace

TEST_CASE("a ledger needs ATR_FEATURE_LEDGER, and a header that agrees with its registration", "[service][ledger]") {
  ServiceFixture f;
  LedgerClient old_client(f, ATR_FEATURE_MEMFD);  // a 1.1 client of before the ledger
  CHECK(old_client.Register(LedgerRegister(1), LedgerWith(1)) == ATR_ENOTSUP);
  LedgerClient c(f, ATR_FEATURE_MEMFD | ATR_FEATURE_LEDGER);
  CHECK(c.Register(LedgerRegister(1), LedgerWith(1, /*header_records=*/4)) == ATR_EINVAL);
  CHECK(c.Register(LedgerRegister(1), EmptyRing()) == ATR_EINVAL);  // a tracer ring is no ledger
  CHECK(c.Register(LedgerRegister(1), LedgerWith(1)) == 0);
  CHECK(f.service->rings() == 1);
  // A plain ring alongside works as before.
  CHECK(c.Register(RegisterPayload(2), RingWith({"a record"})) == 0);
}

TEST_CASE("the ledger joins every save of its connection's rings, and a save of it alone", "[service][ledger]") {
  ServiceFixture f;
  LedgerClient c(f, ATR_FEATURE_MEMFD | ATR_FEATURE_LEDGER);
  REQUIRE(c.Register(LedgerRegister(1), LedgerWith(3)) == 0);
  REQUIRE(c.Register(RegisterPayload(2), RingWith({"a record"})) == 0);

  SECTION("RING_REPORT naming only the tracer ring") {
    proto::RingReport report;
    report.wait = true;
    report.object_ids = {2};
    REQUIRE(f.Call(c.id, ATR_OP_RING_REPORT, Payload(report)).status == 0);
    const auto dirs = KindDirs(f, "schedule");
    REQUIRE(dirs.size() == 1);
    CHECK(ListNames(dirs[0]) == std::vector<std::string>{"hccl_tracer_ledger.bin", "schedule_tracer_obj2.txt"});
    const proto::LedgerSnapshot snap = SavedLedger(dirs[0]);
    REQUIRE(snap.records.size() == 3);
    CHECK(snap.records[2].comm == "world");
    CHECK(snap.records[2].comm_seq == 3);
  }
  SECTION("RING_SAVE_ALL, then GOODBYE's exit save") {
    REQUIRE(f.Call(c.id, ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})).status == 0);
    REQUIRE(KindDirs(f, "schedule").size() == 1);
    CHECK(SavedLedger(KindDirs(f, "schedule")[0]).records.size() == 3);
    REQUIRE(f.Call(c.id, ATR_OP_GOODBYE, {}).status == 0);
    const auto exits = KindDirs(f, "exit");
    REQUIRE(exits.size() == 1);
    CHECK(ListNames(exits[0]) == std::vector<std::string>{"hccl_tracer_ledger.bin"});  // obj2 is no exitSave ring
  }
}

TEST_CASE("a ledger with no complete record makes no file", "[service][ledger]") {
  ServiceFixture f;
  LedgerClient c(f, ATR_FEATURE_MEMFD | ATR_FEATURE_LEDGER);
  REQUIRE(c.Register(LedgerRegister(1), LedgerWith(0)) == 0);
  REQUIRE(c.Register(RegisterPayload(2), RingWith({"a record"})) == 0);
  REQUIRE(f.Call(c.id, ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})).status == 0);
  const auto dirs = KindDirs(f, "schedule");
  REQUIRE(dirs.size() == 1);
  CHECK(ListNames(dirs[0]) == std::vector<std::string>{"schedule_tracer_obj2.txt"});
}

TEST_CASE("the ledger is in a crash's and a death's stackcore dir, and in DUMP's", "[service][ledger]") {
  FakeCrashInspector inspector;
  TraceService::Dependencies deps;
  deps.crash_inspector = &inspector;
  deps.schedule_departures = [](std::chrono::milliseconds, std::function<void()>) {};
  ServiceFixture f({}, deps);
  f.processes.processes[100] = {100, 1000, "app", {}, {}};
  LedgerClient c(f, ATR_FEATURE_MEMFD | ATR_FEATURE_LEDGER);
  REQUIRE(c.Register(LedgerRegister(1), LedgerWith(2)) == 0);  // the ledger alone: no tracer ring

  SECTION("DUMP (signal 35)") {
    REQUIRE(f.Call(CrashChannel(f, 100), ATR_OP_DUMP, Payload(proto::Dump{35, 101})).status == 0);
    const auto dirs = KindDirs(f, "schedule");
    REQUIRE(dirs.size() == 1);
    CHECK(SavedLedger(dirs[0]).records.size() == 2);
  }
  SECTION("CRASH") {
    REQUIRE(f.Call(CrashChannel(f, 100), ATR_OP_CRASH, Payload(proto::Crash{SIGSEGV, 1, 101, 0})).status == 0);
    const auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(SavedLedger(dirs[0]).records.size() == 2);
  }
  SECTION("a death without GOODBYE") {
    f.processes.ended[100] = ProcessEnd{true, SIGKILL};
    f.service->Disconnect(c.id);
    const auto dirs = KindDirs(f, "stackcore");
    REQUIRE(dirs.size() == 1);
    CHECK(SavedLedger(dirs[0]).records.size() == 2);
  }
}

TEST_CASE("the hang watch reads a held ledger now as a save does: checked records, none of a tracer ring",
          "[service][ledger][hang_watch]") {
  Result<HeldRing> ledger = HeldRing::Map(LedgerWith(3), LedgerRegistration(1));
  REQUIRE(ledger.ok());
  const std::optional<proto::LedgerSnapshot> snap = ledger->LedgerNow();
  REQUIRE(snap);
  CHECK(snap->header_valid);
  REQUIRE(snap->records.size() == 3);
  CHECK(snap->records.back().comm == "world");
  CHECK(snap->records.back().comm_seq == 3);
  // What the journal entry carries of it: one communicator, its last call #3.
  const auto comms = proto::LatestPerName(proto::SummarizeLedger(*snap));
  REQUIRE(comms.size() == 1);
  CHECK(proto::CommunicatorJournalValue(comms[0], snap->completion_tracked()) ==
        "rank=1 size=2 seq=3 op=1 count=64 dtype=0 reduce=0 peer=- completed=- tracked=0 cut=0 name=world");

  // The process claims more calls than it wrote: the slots it never wrote are not calls.
  UniqueFd claimed = LedgerWith(2);
  const uint64_t huge = 1000;
  REQUIRE(::pwrite(claimed.get(), &huge, sizeof huge, ATR_LEDGER_OFF_WRITE_INDEX) == static_cast<ssize_t>(sizeof huge));
  Result<HeldRing> lying = HeldRing::Map(std::move(claimed), LedgerRegistration(2));
  REQUIRE(lying.ok());
  const auto lies = lying->LedgerNow();
  REQUIRE(lies);
  CHECK(lies->records.size() == 2);

  proto::RingRegister tracer;
  tracer.object_id = 3;
  tracer.msg_num = 4;
  tracer.msg_size = 64;
  tracer.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));
  tracer.name = "a";
  Result<HeldRing> ring = HeldRing::Map(RingWith({"a record"}), tracer);
  REQUIRE(ring.ok());
  CHECK_FALSE(ring->LedgerNow());
}
