// The store's retention beyond the counts: the byte budget (max-use), the keep-free reserve,
// exit dirs aged last for bytes, the aging policies, the maximum age and a change of each at
// run time. A real temporary tree under a fault-injecting wrapper that reports made-up
// free-space figures (shrinking as the store writes, growing as it deletes), a fake clock.
#include <catch2/catch.hpp>

#include <filesystem>

#include "atraced/store/posix_file_system.h"
#include "atraced/store/trace_store.h"
#include "support/capture_log.h"
#include "support/fake_clock.h"
#include "support/fault_file_system.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

const std::string kProcTime = "20260101000000000000";
constexpr uint64_t kDisk = 1'000'000;

RetentionSettings Bytes(uint64_t max_use, uint64_t keep_free) {
  RetentionSettings r;
  r.max_use = SizeSpec{max_use, false};
  r.keep_free = SizeSpec{keep_free, false};
  return r;
}

class RetentionFixture {
 public:
  explicit RetentionFixture(RetentionSettings settings, uint64_t available = kDisk, uint32_t record_num = 1000)
      : posix_(Open(tmp_.path())), fault_(*posix_), remover_(fault_) {
    fault_.FakeSpace(kDisk, available);
    Start(settings, record_num);
  }
  void Start(RetentionSettings settings, uint32_t record_num = 1000) {
    store_ = std::make_unique<TraceStore>(fault_, remover_, clock_, log_.logger(), refusals_, record_num);
    store_->SetExitRecordNum(kExitRecordNumMax);
    REQUIRE(store_->SetRetention(settings).ok());
    REQUIRE(store_->Recover().ok());
  }
  static std::unique_ptr<PosixFileSystem> Open(const std::string& root) {
    auto fs = PosixFileSystem::Open(root);
    REQUIRE(fs.ok());
    return std::move(*fs);
  }

  // A new pinned event of process group `pgid`; returns its sequence.
  uint64_t Begin(EventKind kind = EventKind::kSchedule, int32_t pgid = 100, uint32_t uid = 1000) {
    auto r = TryBegin(kind, pgid, uid);
    REQUIRE(r.ok());
    return r->seq;
  }
  Result<BeginResult> TryBegin(EventKind kind = EventKind::kSchedule, int32_t pgid = 100, uint32_t uid = 1000) {
    clock_.Advance(1ms);
    auto r = store_->BeginEvent({{pgid, pgid, kProcTime}, kind, pgid, "", Side::kHost, 0, uid, ""});
    if (r.ok()) paths_[r->seq] = r->rel_path;
    return r;
  }
  // What the request handler does for FILE_APPEND: room first, then the write, then the count.
  Status Write(uint64_t seq, size_t n) {
    if (Status st = store_->MakeRoom(seq, n); !st.ok()) return st;
    auto file = store_->OpenFile(seq, TraceFileName::Object({"schedule", "obj", false}));
    REQUIRE(file.ok());
    std::string data(n, 'x');
    REQUIRE((*file)->Append({reinterpret_cast<const uint8_t*>(data.data()), data.size()}).ok());
    store_->AddBytes(seq, n);
    return Status::Ok();
  }
  // An event of `n` bytes, ended (unpinned).
  uint64_t Event(size_t n, EventKind kind = EventKind::kSchedule, int32_t pgid = 100, uint32_t uid = 1000) {
    uint64_t seq = Begin(kind, pgid, uid);
    REQUIRE(Write(seq, n).ok());
    store_->EndEvent(seq);
    return seq;
  }
  bool OnDisk(uint64_t seq) { return std::filesystem::is_directory(tmp_.path() + "/atrace/" + paths_.at(seq)); }
  uint64_t aged(AgingReason r) const { return store_->counters().dirs_aged_by[static_cast<size_t>(r)]; }
  uint64_t refused(ByteLimit l) const { return store_->counters().refused_by_limit[static_cast<size_t>(l)]; }

  TempDir tmp_;
  std::unique_ptr<PosixFileSystem> posix_;
  FaultFileSystem fault_;
  InlineRemover remover_;
  FakeClock clock_;
  CaptureLog log_;
  RefusalLog refusals_;
  std::unique_ptr<TraceStore> store_;
  std::map<uint64_t, std::string> paths_;
};

}  // namespace

TEST_CASE("max-use reached exactly keeps everything, one byte over ages the oldest", "[retention]") {
  RetentionFixture f(Bytes(3000, 0));
  uint64_t a = f.Event(1000);
  uint64_t b = f.Event(1000);
  uint64_t c = f.Event(1000);
  CHECK(f.store_->space().used() == 3000);
  CHECK(f.aged(AgingReason::kMaxUse) == 0);
  uint64_t d = f.Begin();
  REQUIRE(f.Write(d, 1).ok());
  CHECK_FALSE(f.OnDisk(a));
  CHECK(f.OnDisk(b));
  CHECK(f.OnDisk(c));
  CHECK(f.store_->space().used() == 2001);
  CHECK(f.aged(AgingReason::kMaxUse) == 1);
  CHECK(f.store_->counters().bytes_freed_by[static_cast<size_t>(AgingReason::kMaxUse)] == 1000);
  CHECK(f.log_.Has(LogLevel::kInfo, "aged 1 event dir(s) for max-use; use 2000 of budget 3000"));
}

TEST_CASE("pinned data over max-use refuses the append with ENOSPC until a pin is released", "[retention]") {
  RetentionFixture f(Bytes(2000, 0));
  uint64_t a = f.Begin();
  REQUIRE(f.Write(a, 1500).ok());
  uint64_t b = f.Begin();
  REQUIRE(f.Write(b, 500).ok());
  Status st = f.Write(b, 1);
  CHECK(st.err() == ENOSPC);
  CHECK(st.message().find("max-use") != std::string::npos);
  CHECK(f.refused(ByteLimit::kMaxUse) == 1);
  CHECK(f.OnDisk(a));
  CHECK(f.store_->space().used() == 2000);  // nothing accepted was lost, nothing over was written
  CHECK(f.log_.Has(LogLevel::kWarning, "refusing writes (ENOSPC)"));
  // A new (empty) event still fits at exactly the budget; its first byte does not.
  auto empty = f.TryBegin();
  REQUIRE(empty.ok());
  CHECK(f.Write(empty->seq, 1).err() == ENOSPC);
  f.store_->EndEvent(empty->seq);

  f.store_->EndEvent(a);  // a is now the oldest unpinned dir
  REQUIRE(f.Write(b, 1).ok());
  CHECK_FALSE(f.OnDisk(a));
  CHECK(f.OnDisk(b));
  CHECK(f.log_.Has(LogLevel::kNotice, "accepting writes again"));
}

TEST_CASE("the dir being written is never aged for its own bytes", "[retention]") {
  RetentionFixture f(Bytes(1000, 0));
  uint64_t a = f.Begin();
  REQUIRE(f.Write(a, 1000).ok());
  f.store_->EndEvent(a);
  // Unpinned now, but the one being written: refused rather than deleted under the writer.
  CHECK(f.store_->MakeRoom(a, 1).err() == ENOSPC);
  CHECK(f.OnDisk(a));
}

TEST_CASE("keep-free ages the oldest until the reserve holds, counted as keep-free", "[retention]") {
  RetentionFixture f(Bytes(kDisk, 8000), 10000);
  uint64_t a = f.Event(1000);  // 9000 free
  uint64_t b = f.Event(1000);  // 8000 free: the reserve reached exactly
  CHECK(f.aged(AgingReason::kKeepFree) == 0);
  uint64_t c = f.Begin();
  REQUIRE(f.Write(c, 1000).ok());  // 7000 would be left: a goes first
  CHECK_FALSE(f.OnDisk(a));
  CHECK(f.OnDisk(b));
  CHECK(f.aged(AgingReason::kKeepFree) == 1);
  CHECK(f.aged(AgingReason::kMaxUse) == 0);
}

TEST_CASE("a disk filled by someone else refuses new events with ENOSPC and resumes when space returns",
          "[retention]") {
  RetentionFixture f(Bytes(kDisk, 8000), 100000);
  uint64_t a = f.Begin();
  REQUIRE(f.Write(a, 100).ok());
  f.fault_.SetAvailable(5000);  // another program filled the disk
  f.clock_.Advance(1s);
  f.store_->Tick();  // the daemon's timer (every 2 s) takes a fresh figure: nothing to age
  auto r = f.TryBegin();
  CHECK(r.status().err() == ENOSPC);
  CHECK(r.status().message().find("keep-free") != std::string::npos);
  CHECK(f.refused(ByteLimit::kKeepFree) == 1);
  CHECK(f.Write(a, 1).err() == ENOSPC);
  CHECK(f.OnDisk(a));  // pinned: never aged to make the numbers work
  // Refusals are logged once per interval, not once each.
  CHECK(f.log_.Count(LogLevel::kWarning, "refusing writes (ENOSPC)") == 1);

  f.fault_.SetAvailable(50000);
  f.clock_.Advance(SpaceAccount::kResampleInterval);
  REQUIRE(f.TryBegin().ok());
  REQUIRE(f.Write(a, 1).ok());
  CHECK(f.log_.Has(LogLevel::kNotice, "accepting writes again"));
}

TEST_CASE("the store's refusal lines ask the daemon's one throttle: one line per uid per interval, whatever refused",
          "[retention][refusals]") {
  RetentionFixture f(Bytes(kDisk, 8000), 100000);
  uint64_t suppressed = 99;
  // The service refused uid 3000 a moment ago and logged it: the store's refusal of that
  // uid gets no second line.
  REQUIRE(f.refusals_.ShouldLog(3000, &suppressed));
  f.fault_.SetAvailable(5000);  // another program filled the disk
  f.store_->Tick();
  for (int i = 0; i < 5; ++i) CHECK(f.TryBegin(EventKind::kSchedule, 100, 1000).status().err() == ENOSPC);
  CHECK(f.TryBegin(EventKind::kSchedule, 200, 2000).status().err() == ENOSPC);  // another uid: a line of its own
  CHECK(f.TryBegin(EventKind::kSchedule, 300, 3000).status().err() == ENOSPC);
  CHECK(f.log_.Count(LogLevel::kWarning, "refusing writes (ENOSPC)") == 2);
  CHECK(f.log_.Count(LogLevel::kWarning, "for uid 1000: keep-free") == 1);
  CHECK(f.log_.Count(LogLevel::kWarning, "for uid 2000: keep-free") == 1);
  CHECK(f.log_.Count(LogLevel::kWarning, "for uid 3000") == 0);
  // The service's next refusal of uid 1000 in the interval is not logged either, and the
  // uid's next line counts the store's refusals that were not.
  CHECK_FALSE(f.refusals_.ShouldLog(1000, &suppressed));
  REQUIRE(f.refusals_.ShouldLog(1000, std::chrono::steady_clock::now() + RefusalLog::kInterval, &suppressed));
  CHECK(suppressed == 5);  // 4 of the store's, 1 of the service's

  f.fault_.SetAvailable(50000);
  f.clock_.Advance(SpaceAccount::kResampleInterval);
  REQUIRE(f.TryBegin().ok());
  CHECK(f.log_.Has(LogLevel::kNotice, "accepting writes again (7 refused meanwhile)"));
}

TEST_CASE("free space is asked once per aging pass, not per append", "[retention]") {
  RetentionFixture f(Bytes(kDisk, 1000), 900000);
  f.fault_.ResetCalls();
  uint64_t a = f.Begin();
  for (int i = 0; i < 50; ++i) REQUIRE(f.Write(a, 100).ok());
  CHECK(f.fault_.calls(FsOp::kSpace) == 0);
  f.store_->Tick();
  CHECK(f.fault_.calls(FsOp::kSpace) == 1);
}

TEST_CASE("exit dirs are aged for bytes last, even when they are older", "[retention]") {
  RetentionFixture f(Bytes(3000, 0));
  uint64_t exit_dir = f.Event(1000, EventKind::kExit);
  uint64_t s1 = f.Event(1000);
  uint64_t s2 = f.Event(1000);
  uint64_t s3 = f.Begin();
  REQUIRE(f.Write(s3, 1500).ok());  // needs 1500: s1 and s2 go, the older exit dir stays
  CHECK(f.OnDisk(exit_dir));
  CHECK_FALSE(f.OnDisk(s1));
  CHECK_FALSE(f.OnDisk(s2));
  REQUIRE(f.Write(s3, 1000).ok());  // only the exit dir is left to age
  CHECK_FALSE(f.OnDisk(exit_dir));
  CHECK(f.OnDisk(s3));
}

TEST_CASE("bytes held through a passed descriptor age no one's dir and refuse only their holder", "[retention]") {
  RetentionFixture f(Bytes(2000, 0));
  const uint32_t victim = 1000, holder = 2000;
  uint64_t a = f.Event(1000, EventKind::kSchedule, 100, victim);
  uint64_t b = f.Begin(EventKind::kSchedule, 200, holder);
  REQUIRE(f.Write(b, 0).ok());  // its file, whose descriptor goes to the holder
  f.store_->EndEvent(b);
  f.store_->AddHeldBytes(b, holder, {1500, 1500});  // what a passed file's fstat found
  CHECK(f.OnDisk(a));
  CHECK(f.OnDisk(b));
  CHECK(f.store_->space().used() == 2500);  // counted, and shown
  CHECK(f.store_->space().held() == 1500);
  // The victim writes on; the holder is refused, with a message that says why.
  uint64_t next = f.Begin(EventKind::kSchedule, 100, victim);
  REQUIRE(f.Write(next, 500).ok());
  CHECK(f.OnDisk(a));
  Status refused = f.store_->MakeRoom(0, 100, holder);
  CHECK(refused.err() == ENOSPC);
  CHECK_THAT(refused.message(), Catch::Contains("uid 2000 holds 1500 bytes through descriptors passed to it"));
  CHECK(f.TryBegin(EventKind::kSchedule, 200, holder).status().err() == ENOSPC);
  CHECK(f.store_->MakeRoom(b, 1).err() == ENOSPC);  // a write into its own event: its uid is the event's
  // The holder's dir aged (here for the count, any reason alike) frees nothing: its bytes stay its own.
  f.store_->EndEvent(next);
  f.store_->SetRecordNum(1);
  CHECK_FALSE(f.OnDisk(a));
  CHECK_FALSE(f.OnDisk(b));
  CHECK(f.store_->space().held() == 1500);
  CHECK(f.store_->MakeRoom(0, 100, holder).err() == ENOSPC);
  CHECK(f.store_->MakeRoom(0, 100, victim).ok());
}

TEST_CASE("released held bytes that keep the root over its budget age their own dir first", "[retention]") {
  RetentionFixture f(Bytes(2000, 0));
  uint64_t a = f.Event(1000, EventKind::kSchedule, 100, 1000);
  uint64_t b = f.Begin(EventKind::kSchedule, 200, 2000);
  REQUIRE(f.Write(b, 0).ok());
  f.store_->EndEvent(b);
  f.store_->AddHeldBytes(b, 2000, {1500, 1500});
  f.store_->ReleaseHeld(b, 2000, 1500);  // its writer closed: the bytes are ordinary, and over
  CHECK_FALSE(f.OnDisk(b));
  CHECK(f.OnDisk(a));
  CHECK(f.store_->space().held() == 0);
  CHECK(f.store_->space().used() == 1000);
  CHECK(f.store_->MakeRoom(0, 100, 2000).ok());
}

TEST_CASE("in-progress dirs count against the budget", "[retention]") {
  RetentionFixture f(Bytes(2000, 0));
  uint64_t open = f.Begin();
  REQUIRE(f.Write(open, 1500).ok());
  CHECK(f.store_->space().used() == 1500);
  uint64_t old = f.Event(400);
  uint64_t next = f.Begin();
  REQUIRE(f.Write(next, 200).ok());  // 2100 would be over: the unpinned one goes, the open one stays
  CHECK(f.OnDisk(open));
  CHECK_FALSE(f.OnDisk(old));
}

TEST_CASE("recovery measures every dir, so the budget holds across a restart", "[retention]") {
  RetentionFixture f(Bytes(kDisk, 0));
  uint64_t a = f.Event(700);
  uint64_t b = f.Event(300);
  // Recovery measures allocated blocks; fix them so the test does not depend on the disk's.
  f.fault_.FakeUsage(f.paths_.at(a), {700, 700});
  f.fault_.FakeUsage(f.paths_.at(b), {300, 300});
  f.Start(Bytes(900, 0));  // a restart with a smaller budget
  // Not sized before the daemon accepts: nothing counted, nothing aged yet.
  CHECK(f.store_->space().used() == 0);
  CHECK(f.store_->count(AgeClass::kHost) == 2);
  CHECK(f.store_->SizeRecovered(1) == 1);
  CHECK(f.store_->SizeRecovered(100) == 0);
  CHECK(f.store_->count(AgeClass::kHost) == 1);
  CHECK(f.store_->space().used() == 300);
  CHECK(f.aged(AgingReason::kMaxUse) == 1);
}

TEST_CASE("percent sizes and the defaults are resolved against the file system", "[retention]") {
  RetentionSettings pct;
  pct.max_use = SizeSpec{5, true};
  pct.keep_free = SizeSpec{20, true};
  RetentionFixture f(pct);
  CHECK(f.store_->space().limits().max_use == kDisk / 20);
  CHECK(f.store_->space().limits().keep_free == kDisk / 5);
  REQUIRE(f.store_->SetRetention({}).ok());
  CHECK(f.store_->space().limits().max_use == kDisk / 10);
  CHECK(f.store_->space().limits().keep_free == kDisk / 100 * 15);
}

TEST_CASE("a smaller max-use applied at run time ages at once", "[retention]") {
  RetentionFixture f(Bytes(kDisk, 0));
  uint64_t a = f.Event(1000);
  uint64_t b = f.Event(1000);
  REQUIRE(f.store_->SetRetention(Bytes(1000, 0)).ok());
  CHECK_FALSE(f.OnDisk(a));
  CHECK(f.OnDisk(b));
  CHECK(f.log_.Has(LogLevel::kNotice, "retention: max-use set"));
}

TEST_CASE("a larger keep-free applied at run time ages at once", "[retention]") {
  RetentionFixture f(Bytes(kDisk, 0), 10000);
  uint64_t a = f.Event(1000);
  uint64_t b = f.Event(1000);  // 8000 free now
  f.clock_.Advance(1s);
  REQUIRE(f.store_->SetRetention(Bytes(kDisk, 8500)).ok());
  CHECK_FALSE(f.OnDisk(a));
  CHECK(f.OnDisk(b));
  CHECK(f.aged(AgingReason::kKeepFree) == 1);
}

TEST_CASE("max-age ages old unpinned dirs on the tick, of every class", "[retention]") {
  RetentionSettings r = Bytes(kDisk, 0);
  r.max_age = 60s;
  RetentionFixture f(r);
  uint64_t old_schedule = f.Event(10);
  uint64_t old_exit = f.Event(10, EventKind::kExit);
  uint64_t old_open = f.Begin();
  f.clock_.Advance(50s);
  uint64_t young = f.Event(10);
  f.clock_.Advance(15s);
  f.store_->Tick();
  CHECK_FALSE(f.OnDisk(old_schedule));
  CHECK_FALSE(f.OnDisk(old_exit));
  CHECK(f.OnDisk(old_open));
  CHECK(f.OnDisk(young));
  CHECK(f.aged(AgingReason::kAge) == 2);
  CHECK(f.log_.Has(LogLevel::kInfo, "older than max-age 60s"));
  // Off: nothing is aged for age, however old.
  REQUIRE(f.store_->SetRetention(Bytes(kDisk, 0)).ok());
  f.clock_.Advance(1000s);
  f.store_->Tick();
  CHECK(f.OnDisk(young));
}

TEST_CASE("fair aging takes a crash-looping user's dirs before anyone else's, whatever its process groups",
          "[retention]") {
  RetentionSettings fair = Bytes(kDisk, 0);
  fair.policy = AgingPolicy::kFair;
  RetentionFixture f(fair, kDisk, 10);
  uint64_t victim_of_fifo = f.Event(10, EventKind::kSchedule, 100, 100);  // the oldest, of a quiet user
  uint64_t other = f.Event(10, EventKind::kSchedule, 200, 200);
  // The looper is one uid that calls setsid() for every event: a new process group each time
  // (grouping by pgid left the quiet users none of their dirs).
  int32_t pgid = 1000;
  for (int i = 0; i < 8; ++i) f.Event(10, EventKind::kSchedule, ++pgid, 500);
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  for (int i = 0; i < 5; ++i) f.Event(10, EventKind::kSchedule, ++pgid, 500);  // the loop goes on
  CHECK(f.OnDisk(victim_of_fifo));
  CHECK(f.OnDisk(other));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.aged(AgingReason::kCount) == 5);
}

TEST_CASE("fifo aging takes the oldest whoever made it", "[retention]") {
  RetentionFixture f(Bytes(kDisk, 0), kDisk, 10);
  uint64_t oldest = f.Event(10, EventKind::kSchedule, 100);
  for (int i = 0; i < 10; ++i) f.Event(10, EventKind::kSchedule, 500);
  CHECK_FALSE(f.OnDisk(oldest));
}

TEST_CASE("fair aging for bytes also takes from the user holding the most", "[retention]") {
  RetentionSettings fair = Bytes(5000, 0);
  fair.policy = AgingPolicy::kFair;
  RetentionFixture f(fair);
  uint64_t quiet = f.Event(1000, EventKind::kSchedule, 100, 100);
  uint64_t loop1 = f.Event(1000, EventKind::kSchedule, 500, 500);
  f.Event(1000, EventKind::kSchedule, 501, 500);
  f.Event(1000, EventKind::kSchedule, 502, 500);
  uint64_t s = f.Begin(EventKind::kSchedule, 200, 200);
  REQUIRE(f.Write(s, 1500).ok());
  CHECK(f.OnDisk(quiet));
  CHECK_FALSE(f.OnDisk(loop1));
}
