// The trace store against a real temporary tree, with a fault-injecting wrapper where a
// case needs the disk to fail.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "atraced/store/posix_file_system.h"
#include "atraced/store/trace_store.h"
#include "atraced/store/trace_time.h"
#include "support/capture_log.h"
#include "support/fake_clock.h"
#include "support/fault_file_system.h"
#include "support/temp_dir.h"

#include <fstream>

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

const std::string kProcTime = "20260101000000000000";

class StoreFixture {
 public:
  explicit StoreFixture(uint32_t record_num = 10)
      : posix_(Open(tmp_.path())), fault_(*posix_), remover_(fault_), store_(Make(record_num)) {
    REQUIRE(store_->Recover().ok());
  }

  static std::unique_ptr<PosixFileSystem> Open(const std::string& root) {
    auto fs = PosixFileSystem::Open(root);
    REQUIRE(fs.ok());
    return std::move(*fs);
  }
  std::unique_ptr<TraceStore> Make(uint32_t record_num) {
    return std::make_unique<TraceStore>(fault_, remover_, clock_, log_.logger(), refusals_, record_num);
  }
  // Simulates a daemon restart: a new store over the same tree.
  void Restart(uint32_t record_num) {
    store_ = Make(record_num);
    REQUIRE(store_->Recover().ok());
  }

  // Begins an event one millisecond after the previous one and returns its sequence.
  uint64_t Begin(EventKind kind = EventKind::kSchedule, Side side = Side::kHost, int32_t pid = 100,
                 bool end = true, std::string time = "") {
    clock_.Advance(1ms);
    EventSpec spec{{pid, pid, kProcTime}, kind, pid, std::move(time), side, side == Side::kDevice ? 1u : 0u, 1000, ""};
    spec.dump = next_dump;
    spec.labels = next_labels;
    auto r = store_->BeginEvent(spec);
    REQUIRE(r.ok());
    paths_[r->seq] = r->rel_path;
    // An event holds a file, as every real one does: one that ends with none is taken back.
    REQUIRE(store_->OpenFile(r->seq, TraceFileName::Object({"schedule", "x", false})).ok());
    if (end) store_->EndEvent(r->seq);
    return r->seq;
  }
  std::string AbsOf(uint64_t seq) { return trace_dir() + "/" + paths_.at(seq); }
  std::string order_log() const { return trace_dir() + "/.atraced_order"; }
  // Opens an object file in a pinned event and appends `text` to it.
  void Write(uint64_t seq, const std::string& object, const std::string& text) {
    auto file = store_->OpenFile(seq, TraceFileName::Object({"schedule", object, false}));
    REQUIRE(file.ok());
    REQUIRE((*file)->Append({reinterpret_cast<const uint8_t*>(text.data()), text.size()}).ok());
  }
  bool OnDisk(uint64_t seq) { return IsDir(AbsOf(seq)); }
  // The event directory's own name (its path's last component).
  std::string EventName(uint64_t seq) { return paths_.at(seq).substr(paths_.at(seq).rfind('/') + 1); }
  std::string aside_dir() const { return trace_dir() + "/.atraced_aged"; }
  // Whether aging moved the event's directory aside and its delete has not finished.
  bool Aside(uint64_t seq) {
    for (const auto& name : ListNames(aside_dir())) {
      if (name.size() > EventName(seq).size() && name.ends_with("_" + EventName(seq))) return true;
    }
    return false;
  }
  std::string trace_dir() const { return tmp_.path() + "/atrace"; }
  // Counts event dirs on disk whose marker says `side` (kinds other than exit).
  size_t DiskCount(EventKind kind) {
    size_t n = 0;
    for (auto& proc : ListNames(trace_dir())) {
      for (auto& ev : ListNames(trace_dir() + "/" + proc)) {
        auto name = ParseEventDirName(ev);
        if (name && name->kind == kind) ++n;
      }
    }
    return n;
  }

  TempDir tmp_;
  FakeClock clock_;
  CaptureLog log_;
  RefusalLog refusals_;
  std::unique_ptr<PosixFileSystem> posix_;
  FaultFileSystem fault_;
  InlineRemover remover_;  // deletes happen inside the call, so tests can look at the disk
  std::unique_ptr<TraceStore> store_;
  std::map<uint64_t, std::string> paths_;
  DumpKind next_dump = DumpKind::kNone;  // what Begin's directories are
  proto::Labels next_labels{};           // and their process's labels
};

}  // namespace

TEST_CASE("event dirs follow the CANN layout with fixed modes", "[store]") {
  mode_t old = ::umask(077);  // the modes must not depend on the umask
  StoreFixture f;
  f.clock_.Set(std::chrono::system_clock::time_point(1779460215s + 123456us));
  EventSpec spec{{4242, 4343, kProcTime}, EventKind::kSchedule, 4343, "", Side::kHost, 0, 1000, ""};
  auto r = f.store_->BeginEvent(spec);
  REQUIRE(r.ok());
  std::string time = FormatTraceTime(f.clock_.Now());
  CHECK(r->rel_path == "trace_4242_4343_" + kProcTime + "/schedule_event_4343_" + time);
  std::string dir = f.trace_dir() + "/" + r->rel_path;
  CHECK(IsDir(dir));
  CHECK(Mode(f.trace_dir()) == 0750);
  CHECK(Mode(f.trace_dir() + "/trace_4242_4343_" + kProcTime) == 0750);
  CHECK(Mode(dir) == 0750);

  const std::string a = "line one\n";
  f.Write(r->seq, "RUNTIME", a);
  f.Write(r->seq, "RUNTIME", a);  // reopening appends; nothing is ever truncated
  CHECK(ReadFile(dir + "/schedule_tracer_RUNTIME.txt") == a + a);
  CHECK(Mode(dir + "/schedule_tracer_RUNTIME.txt") == 0640);
  // The event dir holds the trace files and nothing else; all atraced adds to CANN's layout
  // is hidden, beside the process dirs: the order log and the aside dir for aged dirs.
  CHECK(ListNames(dir) == std::vector<std::string>{"schedule_tracer_RUNTIME.txt"});
  CHECK(ListNames(f.trace_dir()) ==
        std::vector<std::string>{".atraced_aged", ".atraced_order", "trace_4242_4343_" + kProcTime});
  CHECK(Mode(f.aside_dir()) == 0750);
  CHECK(Mode(f.order_log()) == 0640);
  ::umask(old);
}
TEST_CASE("files open only in an event that exists", "[store]") {
  StoreFixture f;
  auto r = f.store_->OpenFile(999, TraceFileName::Ts(0));
  CHECK_FALSE(r.ok());
  CHECK(r.status().err() == ENOENT);
}
TEST_CASE("host dirs age root-wide across processes, oldest first", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 12; ++i) seqs.push_back(f.Begin(EventKind::kSchedule, Side::kHost, 100 + i % 3));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.DiskCount(EventKind::kSchedule) == 10);
  CHECK_FALSE(f.OnDisk(seqs[0]));
  CHECK_FALSE(f.OnDisk(seqs[1]));
  for (size_t i = 2; i < 12; ++i) CHECK(f.OnDisk(seqs[i]));
  CHECK(f.log_.Has(LogLevel::kDebug, "aged event dir " + f.AbsOf(seqs[0])));
  CHECK(f.store_->counters().dirs_aged == 2);
}

TEST_CASE("dump-keep: twelve dumps survive record-num 10 until the span runs out, then the oldest go",
          "[store][dump_keep]") {
  StoreFixture f(10);
  f.store_->SetDumpKeep(std::chrono::hours(24));
  std::vector<uint64_t> plain, dumps;
  for (int i = 0; i < 4; ++i) plain.push_back(f.Begin());
  f.next_dump = DumpKind::kHang;
  for (int i = 0; i < 6; ++i) dumps.push_back(f.Begin(EventKind::kSchedule, Side::kHost, 200 + i));
  f.next_dump = DumpKind::kOperator;
  for (int i = 0; i < 6; ++i) dumps.push_back(f.Begin(EventKind::kSchedule, Side::kHost, 300 + i));
  // Twelve dumps and room for none of the four others: those went, the dumps stay.
  CHECK(f.store_->count(AgeClass::kHost) == 12);
  for (uint64_t s : plain) CHECK_FALSE(f.OnDisk(s));
  for (uint64_t s : dumps) CHECK(f.OnDisk(s));
  // LIST tells them apart, and a restart keeps it (the order log's 'o' records).
  CHECK(f.store_->Find(dumps[0])->dump == DumpKind::kHang);
  CHECK(f.store_->Find(dumps[11])->dump == DumpKind::kOperator);
  f.Restart(10);  // renumbers: the sequences above are the old ones, the paths stay
  f.store_->SetDumpKeep(std::chrono::hours(24));
  f.store_->Tick();
  CHECK(f.store_->count(AgeClass::kHost) == 12);
  const std::string log = ReadFile(f.order_log());
  CHECK(log.find(" hang\n") != std::string::npos);
  CHECK(log.find(" dump\n") != std::string::npos);
  // The span ran out: the next tick takes the class back to record-num, oldest first.
  f.clock_.Advance(std::chrono::hours(25));
  f.store_->Tick();
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK_FALSE(f.OnDisk(dumps[0]));
  CHECK_FALSE(f.OnDisk(dumps[1]));
  for (size_t i = 2; i < dumps.size(); ++i) CHECK(f.OnDisk(dumps[i]));
  CHECK(f.store_->counters().kept_dumps_aged == 0);  // the count took them, after the span
}

TEST_CASE("dump-keep: an exported dump ages by the count at once and after a restart, an unexported one stays kept",
          "[store][dump_keep]") {
  StoreFixture f(2);
  f.store_->SetDumpKeep(std::chrono::hours(24));
  f.next_dump = DumpKind::kHang;
  std::vector<uint64_t> dumps;
  for (int i = 0; i < 5; ++i) dumps.push_back(f.Begin(EventKind::kSchedule, Side::kHost, 200 + i, true));
  CHECK(f.store_->count(AgeClass::kHost) == 5);
  CHECK(f.store_->KeptDumps() == 5);
  const std::string first = f.paths_[dumps[0]], second = f.paths_[dumps[1]], last = f.paths_[dumps[4]];
  // A uid the asker may not read is skipped, as are a path of nothing and a repeat.
  const std::vector<std::string> others = {first};
  auto refused = f.store_->MarkExported(others, [](uint32_t) { return false; });
  REQUIRE(refused.ok());
  CHECK(*refused == 0);
  CHECK(f.OnDisk(dumps[0]));
  const std::vector<std::string> exported = {first, second, second, "trace_1_1_20260101000000000000/none"};
  auto released = f.store_->MarkExported(exported, [](uint32_t uid) { return uid == 1000; });
  REQUIRE(released.ok());
  CHECK(*released == 2);
  CHECK(f.store_->counters().dumps_exported == 2);
  // The count applies to the two released at once; the three kept stay over record-num 2.
  CHECK_FALSE(f.OnDisk(dumps[0]));
  CHECK_FALSE(f.OnDisk(dumps[1]));
  CHECK(f.store_->count(AgeClass::kHost) == 3);
  CHECK(f.store_->KeptDumps() == 3);
  // Released again: nothing left of them to release.
  CHECK(*f.store_->MarkExported(exported, [](uint32_t) { return true; }) == 0);
  CHECK(f.OnDisk(dumps[4]));
}

TEST_CASE("dump-keep: an export's release survives a restart", "[store][dump_keep]") {
  StoreFixture f(3);
  f.store_->SetDumpKeep(std::chrono::hours(24));
  f.next_dump = DumpKind::kOperator;
  std::vector<uint64_t> dumps;
  for (int i = 0; i < 3; ++i) dumps.push_back(f.Begin(EventKind::kSchedule, Side::kHost, 200 + i));
  const std::vector<std::string> exported = {f.paths_[dumps[1]]};
  REQUIRE(*f.store_->MarkExported(exported, [](uint32_t) { return true; }) == 1);
  CHECK(f.OnDisk(dumps[1]));  // within record-num: nothing to age yet
  CHECK(f.store_->KeptDumps() == 2);
  f.Restart(3);
  f.store_->SetDumpKeep(std::chrono::hours(24));
  CHECK(f.store_->KeptDumps() == 2);
  // One more dump: the count takes the exported one, not the older kept one.
  f.Begin(EventKind::kSchedule, Side::kHost, 300);
  CHECK(f.store_->count(AgeClass::kHost) == 3);
  CHECK(f.OnDisk(dumps[0]));
  CHECK_FALSE(f.OnDisk(dumps[1]));
  CHECK(f.OnDisk(dumps[2]));
}

TEST_CASE("dump-keep 0 spares nothing, and the byte budget may age a kept dump, logged and counted",
          "[store][dump_keep]") {
  SECTION("dump-keep 0") {
    StoreFixture f(10);
    f.store_->SetDumpKeep(std::chrono::seconds(0));
    f.next_dump = DumpKind::kHang;
    for (int i = 0; i < 12; ++i) f.Begin();
    CHECK(f.store_->count(AgeClass::kHost) == 10);
  }
  SECTION("the byte budget") {
    StoreFixture f(10);
    f.store_->SetDumpKeep(std::chrono::hours(24));
    f.next_dump = DumpKind::kHang;
    const uint64_t dump = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
    f.Write(dump, "x", std::string(64 * 1024, 'x'));
    f.store_->AddBytes(dump, 64 * 1024);  // what the daemon counts of its own writes
    f.store_->EndEvent(dump);
    RetentionSettings r;
    r.max_use = SizeSpec{16 * 1024, false};
    REQUIRE(f.store_->SetRetention(r).ok());
    f.store_->Tick();
    CHECK_FALSE(f.store_->Find(dump));
    CHECK(f.store_->counters().kept_dumps_aged == 1);
    CHECK(f.log_.Has(LogLevel::kWarning, "aged dump dir " + f.AbsOf(dump) + " before dump-keep ran out (reason="));
  }
}

TEST_CASE("an aged dump leaves its evidence (labels, reason, time), across a restart, and a plain directory none",
          "[store][dump_keep][aged]") {
  StoreFixture f(10);
  f.store_->SetDumpKeep(std::chrono::hours(24));
  f.next_labels = {.job = "job-7", .rank = "3", .world_size = "8"};
  f.next_dump = DumpKind::kHang;
  const uint64_t dump = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
  f.Write(dump, "x", std::string(64 * 1024, 'x'));
  f.store_->AddBytes(dump, 64 * 1024);
  f.store_->EndEvent(dump);
  f.next_dump = DumpKind::kNone;
  f.next_labels = {.job = "job-7", .rank = "4", .world_size = "8"};
  const uint64_t plain = f.Begin(EventKind::kSchedule, Side::kHost, 101, false);
  f.Write(plain, "x", std::string(64 * 1024, 'x'));
  f.store_->AddBytes(plain, 64 * 1024);
  f.store_->EndEvent(plain);
  const std::string dump_path = f.paths_[dump];
  CHECK(f.store_->aged_dumps().empty());
  const int64_t before_us =
      std::chrono::duration_cast<std::chrono::microseconds>(f.clock_.Now().time_since_epoch()).count();
  RetentionSettings r;
  r.max_use = SizeSpec{16 * 1024, false};
  REQUIRE(f.store_->SetRetention(r).ok());
  f.store_->Tick();
  REQUIRE_FALSE(f.store_->Find(dump));
  REQUIRE_FALSE(f.store_->Find(plain));
  // One record: the dump's. The plain directory was no one's evidence of a hang.
  REQUIRE(f.store_->aged_dumps().size() == 1);
  const AgedDump aged = f.store_->aged_dumps().front();
  CHECK(aged.process_dir + "/" + aged.event_dir == dump_path);
  CHECK(aged.reason == AgingReason::kMaxUse);
  CHECK(aged.dump == DumpKind::kHang);
  CHECK_FALSE(aged.exported);
  CHECK(aged.uid == 1000);
  CHECK(aged.labels.job == "job-7");
  CHECK(aged.labels.rank == "3");
  CHECK(aged.labels.world_size == "8");
  CHECK(aged.aged_us >= before_us);
  // The order log holds it: a restart (and its rewrite) keeps it, and a second restart too.
  f.Restart(10);
  REQUIRE(f.store_->aged_dumps().size() == 1);
  CHECK(f.store_->aged_dumps().front() == aged);
  f.Restart(10);
  REQUIRE(f.store_->aged_dumps().size() == 1);
  CHECK(f.store_->aged_dumps().front() == aged);
  CHECK(ReadFile(f.order_log()).find("a " + std::to_string(aged.aged_us) + " bytes 1000 hang 0 " + dump_path +
                                     " job=job-7 rank=3 world=8\n") != std::string::npos);
}

TEST_CASE("an exported dump that the count ages says so in its evidence", "[store][dump_keep][aged]") {
  StoreFixture f(1);
  f.store_->SetDumpKeep(std::chrono::hours(24));
  f.next_labels = {.job = "j", .rank = "0", .world_size = "2"};
  f.next_dump = DumpKind::kOperator;
  const uint64_t first = f.Begin(EventKind::kSchedule, Side::kHost, 200);
  f.Begin(EventKind::kSchedule, Side::kHost, 201);
  CHECK(f.store_->aged_dumps().empty());  // kept by dump-keep, over record-num 1
  const std::vector<std::string> exported = {f.paths_[first]};
  REQUIRE(*f.store_->MarkExported(exported, [](uint32_t) { return true; }) == 1);
  REQUIRE(f.store_->aged_dumps().size() == 1);
  CHECK(f.store_->aged_dumps().front().reason == AgingReason::kCount);
  CHECK(f.store_->aged_dumps().front().exported);
  CHECK(f.store_->aged_dumps().front().labels.rank == "0");
}

TEST_CASE("host and device are counted separately", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> host, dev;
  for (int i = 0; i < 10; ++i) host.push_back(f.Begin(EventKind::kSchedule, Side::kHost));
  for (int i = 0; i < 10; ++i) dev.push_back(f.Begin(EventKind::kSchedule, Side::kDevice));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.store_->count(AgeClass::kDevice) == 10);
  uint64_t extra = f.Begin(EventKind::kSchedule, Side::kDevice);
  CHECK_FALSE(f.OnDisk(dev[0]));
  CHECK(f.OnDisk(extra));
  for (auto s : host) CHECK(f.OnDisk(s));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.store_->count(AgeClass::kDevice) == 10);
}

TEST_CASE("exit dirs do not count against record-num and are not aged by host dirs", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> exits;
  for (int i = 0; i < 25; ++i) exits.push_back(f.Begin(EventKind::kExit));
  for (int i = 0; i < 10; ++i) f.Begin(EventKind::kSchedule);
  CHECK(f.store_->count(AgeClass::kExit) == 25);
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  for (auto s : exits) CHECK(f.OnDisk(s));
  f.Begin(EventKind::kSchedule);
  for (auto s : exits) CHECK(f.OnDisk(s));
}

TEST_CASE("exit dirs are bounded by exit-record-num, newest kept", "[store][exit]") {
  StoreFixture f(10);
  CHECK(f.store_->exit_record_num() == kExitRecordNumDefault);
  f.store_->SetExitRecordNum(10);
  std::vector<uint64_t> exits;
  for (int i = 0; i < 10; ++i) exits.push_back(f.Begin(EventKind::kExit));
  CHECK(f.store_->count(AgeClass::kExit) == 10);  // exactly at the bound: nothing goes
  for (auto s : exits) CHECK(f.OnDisk(s));
  exits.push_back(f.Begin(EventKind::kExit));       // one over: exactly the oldest goes
  CHECK(f.store_->count(AgeClass::kExit) == 10);
  CHECK_FALSE(f.OnDisk(exits[0]));
  for (size_t i = 1; i < exits.size(); ++i) CHECK(f.OnDisk(exits[i]));
  // Host dirs are not touched by the exit bound, and the other way round.
  for (int i = 0; i < 5; ++i) f.Begin(EventKind::kSchedule);
  CHECK(f.store_->count(AgeClass::kHost) == 5);
  CHECK(f.store_->count(AgeClass::kExit) == 10);
}

TEST_CASE("a pinned exit dir is never removed by the exit bound", "[store][exit]") {
  StoreFixture f(10);
  f.store_->SetExitRecordNum(10);
  uint64_t pinned = f.Begin(EventKind::kExit, Side::kHost, 100, /*end=*/false);
  uint64_t second = f.Begin(EventKind::kExit);
  for (int i = 0; i < 9; ++i) f.Begin(EventKind::kExit);
  CHECK(f.OnDisk(pinned));
  CHECK_FALSE(f.OnDisk(second));
  CHECK(f.store_->count(AgeClass::kExit) == 10);
}

TEST_CASE("lowering exit-record-num ages exit dirs at once and survives a restart", "[store][exit]") {
  StoreFixture f(10);
  std::vector<uint64_t> exits;
  for (int i = 0; i < 30; ++i) exits.push_back(f.Begin(EventKind::kExit));
  CHECK(f.store_->count(AgeClass::kExit) == 30);  // under the default of 100
  f.store_->SetExitRecordNum(20);
  CHECK(f.store_->count(AgeClass::kExit) == 20);
  for (int i = 0; i < 10; ++i) CHECK_FALSE(f.OnDisk(exits[i]));
  for (int i = 10; i < 30; ++i) CHECK(f.OnDisk(exits[i]));
  CHECK(f.log_.Has(LogLevel::kNotice, "exit record num changed from 100 to 20"));
  // A restart with a lower bound applies it at recovery, oldest first.
  f.store_ = f.Make(10);
  f.store_->SetExitRecordNum(15);
  REQUIRE(f.store_->Recover().ok());
  CHECK(f.store_->count(AgeClass::kExit) == 15);
  for (int i = 10; i < 15; ++i) CHECK_FALSE(f.OnDisk(exits[i]));
  for (int i = 15; i < 30; ++i) CHECK(f.OnDisk(exits[i]));
  // Vacuum applies it too (nothing more to do here).
  CHECK(f.store_->Vacuum(false).removed.empty());
}

TEST_CASE("stackcore dirs count in their class", "[store]") {
  StoreFixture f(10);
  uint64_t first = f.Begin(EventKind::kStackcore);
  for (int i = 0; i < 10; ++i) f.Begin(EventKind::kSchedule);
  CHECK_FALSE(f.OnDisk(first));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
}

TEST_CASE("the same path again is the same dir, counted once, in its first place", "[store]") {
  StoreFixture f(10);
  std::string time = "20260101000000000001";
  uint64_t first = f.Begin(EventKind::kSchedule, Side::kHost, 100, true, time);
  for (int i = 0; i < 9; ++i) f.Begin();
  // Reuse the oldest (CANN: FIFO by first creation, not LRU).
  uint64_t again = f.Begin(EventKind::kSchedule, Side::kHost, 100, true, time);
  CHECK(again == first);
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.OnDisk(first));
  f.Begin();
  CHECK_FALSE(f.OnDisk(first));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
}

TEST_CASE("a pinned dir is never removed and the next oldest goes instead", "[store]") {
  StoreFixture f(10);
  uint64_t pinned = f.Begin(EventKind::kSchedule, Side::kHost, 100, /*end=*/false);
  uint64_t second = f.Begin();
  for (int i = 0; i < 9; ++i) f.Begin();
  CHECK(f.OnDisk(pinned));
  CHECK_FALSE(f.OnDisk(second));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  // Writing into the pinned dir still works after others aged around it.
  f.Write(pinned, "x", "still here\n");
}

TEST_CASE("with every candidate pinned the limit waits for a release", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 12; ++i) seqs.push_back(f.Begin(EventKind::kSchedule, Side::kHost, 100, /*end=*/false));
  CHECK(f.store_->count(AgeClass::kHost) == 12);
  for (auto s : seqs) CHECK(f.OnDisk(s));
  f.store_->EndEvent(seqs[5]);  // releasing one pin enforces the limit with what is free
  CHECK(f.store_->count(AgeClass::kHost) == 11);
  CHECK_FALSE(f.OnDisk(seqs[5]));
  f.store_->EndEvent(seqs[0]);
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK_FALSE(f.OnDisk(seqs[0]));
}

TEST_CASE("a failed removal is logged, no longer counts, and is retried on the next pass", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin());
  f.fault_.Fail(FsOp::kRemoveSmallDir, f.EventName(seqs[0]), EBUSY);  // not deleted on the spot: aside
  f.fault_.Fail(FsOp::kRemoveTree, f.EventName(seqs[0]), EACCES, 1);
  uint64_t eleventh = f.Begin(EventKind::kSchedule, Side::kHost, 100, /*end=*/false);
  // Aging took the oldest out of the tree at once; its delete failed, so it waits aside.
  CHECK_FALSE(f.OnDisk(seqs[0]));
  CHECK(f.Aside(seqs[0]));
  CHECK(f.OnDisk(seqs[1]));
  CHECK(f.OnDisk(eleventh));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.DiskCount(EventKind::kSchedule) == 10);
  f.store_->CollectRemovals();
  CHECK(f.log_.Has(LogLevel::kWarning, "can not remove dir " + f.aside_dir() + "/"));
  CHECK(f.log_.Has(LogLevel::kWarning, f.EventName(seqs[0]) + ", errno=13"));
  CHECK(f.store_->counters().removal_failures == 1);
  CHECK(f.store_->removals_pending() == 1);
  // The next pass retries it, and ages the next oldest as usual.
  f.Begin();
  CHECK_FALSE(f.Aside(seqs[0]));
  CHECK_FALSE(f.OnDisk(seqs[1]));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  f.store_->CollectRemovals();
  CHECK(f.store_->removals_pending() == 0);
}
TEST_CASE("a removal that keeps failing is never forgotten, not even across a restart", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin());
  f.fault_.Fail(FsOp::kRemoveSmallDir, f.EventName(seqs[0]), EBUSY);  // not deleted on the spot: aside
  f.fault_.Fail(FsOp::kRemoveTree, f.EventName(seqs[0]), EACCES);  // always
  for (int i = 0; i < 5; ++i) f.Begin();
  CHECK(f.Aside(seqs[0]));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.store_->removals_pending() == 1);
  f.Restart(10);  // still failing: recovery finds it aside and it is still pending
  CHECK(f.Aside(seqs[0]));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  f.store_->CollectRemovals();
  CHECK(f.store_->removals_pending() == 1);
  f.fault_.Clear();
  auto report = f.store_->Vacuum(false);
  CHECK(report.removed.empty());  // nothing new to age; the retry is not a new decision
  CHECK_FALSE(f.Aside(seqs[0]));
  CHECK(ListNames(f.aside_dir()).empty());
  f.store_->CollectRemovals();
  CHECK(f.store_->removals_pending() == 0);
}
TEST_CASE("a dir that vanishes mid-delete counts as removed", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin());
  const std::string aside = f.aside_dir();
  f.fault_.Fail(FsOp::kRemoveSmallDir, f.EventName(seqs[0]), EBUSY);  // not deleted on the spot: aside
  f.fault_.Before(FsOp::kRemoveTree, f.EventName(seqs[0]), [aside] {
    for (const auto& e : std::filesystem::directory_iterator(aside)) std::filesystem::remove_all(e.path());
  });
  f.Begin();
  CHECK_FALSE(f.OnDisk(seqs[0]));
  CHECK_FALSE(f.Aside(seqs[0]));
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(f.store_->counters().removal_failures == 0);
  CHECK_FALSE(f.log_.Has(LogLevel::kWarning, "can not remove dir"));
}

TEST_CASE("a failed creation leaves nothing half-made and counts nothing", "[store]") {
  StoreFixture f(10);
  auto [op, part] = GENERATE(table<FsOp, std::string>({{FsOp::kMakeDir, "schedule_event_"}, {FsOp::kAppend, ".atraced_order"}}));
  auto err = GENERATE(ENOSPC, EIO);
  f.fault_.Fail(op, part, err, 1);
  EventSpec spec{{100, 100, kProcTime}, EventKind::kSchedule, 100, "", Side::kHost, 0, 1000, ""};
  auto r = f.store_->BeginEvent(spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().err() == err);
  CHECK(f.store_->count(AgeClass::kHost) == 0);
  for (auto& proc : ListNames(f.trace_dir())) {
    if (proc[0] != '.') CHECK(ListNames(f.trace_dir() + "/" + proc).empty());
  }
  f.Restart(10);  // nothing of it comes back either
  CHECK(f.store_->count(AgeClass::kHost) == 0);
  // The store is still consistent: the next creation works.
  f.clock_.Advance(1ms);
  CHECK(f.store_->BeginEvent(spec).ok());
  CHECK(f.store_->count(AgeClass::kHost) == 1);
}
TEST_CASE("ENOSPC on write is reported to the writer", "[store]") {
  StoreFixture f(10);
  uint64_t seq = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
  auto file = f.store_->OpenFile(seq, TraceFileName::Object({"schedule", "x", false}));
  REQUIRE(file.ok());
  f.fault_.Fail(FsOp::kAppend, "schedule_tracer_x.txt", ENOSPC, 1);
  const uint8_t byte = 'x';
  Status st = (*file)->Append({&byte, 1});
  CHECK(st.err() == ENOSPC);
  CHECK((*file)->Append({&byte, 1}).ok());
  CHECK((*file)->size() == 1);  // the file counts what really went in
}
TEST_CASE("recovery restores order from the order log, not names or clocks", "[store][recovery]") {
  StoreFixture f(20);
  std::vector<uint64_t> seqs;
  // The clock runs backwards: each name's time is earlier than the previous one's.
  f.clock_.Set(std::chrono::system_clock::time_point(1'790'000'000s));
  for (int i = 0; i < 12; ++i) {
    f.clock_.Advance(-2s);
    seqs.push_back(f.Begin());
  }
  CHECK(f.store_->count(AgeClass::kHost) == 12);
  f.Restart(10);  // a lower record num after a restart: exactly the newest 10 remain
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK_FALSE(f.OnDisk(seqs[0]));
  CHECK_FALSE(f.OnDisk(seqs[1]));
  for (size_t i = 2; i < seqs.size(); ++i) CHECK(f.OnDisk(seqs[i]));
  // New events continue the sequence and age the oldest by creation.
  uint64_t next = f.Begin();
  CHECK(next > seqs.back());
  CHECK_FALSE(f.OnDisk(seqs[2]));
}

TEST_CASE("the clock jumping backwards between events keeps creation order", "[store]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 5; ++i) seqs.push_back(f.Begin());
  f.clock_.Advance(-std::chrono::hours(24 * 365));
  for (int i = 0; i < 5; ++i) seqs.push_back(f.Begin());
  f.Begin();
  CHECK_FALSE(f.OnDisk(seqs[0]));  // the first created goes, though its name is the newest
  for (size_t i = 1; i < seqs.size(); ++i) CHECK(f.OnDisk(seqs[i]));
}

TEST_CASE("a tree of atraced 0.1 is adopted once by its markers, staging leftovers go and foreign dirs stay", "[store][recovery]") {
  TempDir tmp;
  std::string proc = tmp / "atrace/trace_5_5_20260101000000000000";
  std::filesystem::create_directories(proc + "/.atraced_staging_77");
  WriteFile(proc + "/.atraced_staging_77/.atraced_77_host_0_0_0", "");
  // Two managed dirs; a planted marker near 2^64 must neither wrap nor collide.
  std::string older = proc + "/schedule_event_5_20260101000000000003";
  std::string newer = proc + "/schedule_event_5_20260101000000000004";
  std::filesystem::create_directories(older);
  std::filesystem::create_directories(newer);
  WriteFile(older + "/.atraced_5_host_0_0_0", "");
  WriteFile(newer + "/.atraced_18446744073709551615_device_1_0_0", "");
  // A CANN in-process dir: right name, no marker. Not ours: never counted, never deleted.
  std::filesystem::create_directories(proc + "/schedule_event_5_20260101000000000001");
  WriteFile(proc + "/schedule_event_5_20260101000000000001/schedule_tracer_x.txt", "cann");
  std::filesystem::create_directories(tmp / "atrace/not_a_trace_dir/schedule_event_5_20260101000000000002");
  auto fs = PosixFileSystem::Open(tmp.path());
  REQUIRE(fs.ok());
  FakeClock clock;
  CaptureLog log;
  RefusalLog refusals;
  InlineRemover remover(**fs);
  TraceStore store(**fs, remover, clock, log.logger(), refusals, 10);
  REQUIRE(store.Recover().ok());
  CHECK_FALSE(Exists(proc + "/.atraced_staging_77"));
  CHECK(log.Has(LogLevel::kNotice, "adopted 2 event dirs of atraced 0.1"));
  CHECK(store.count(AgeClass::kHost) == 1);
  CHECK(store.count(AgeClass::kDevice) == 1);
  CHECK(ReadFile(proc + "/schedule_event_5_20260101000000000001/schedule_tracer_x.txt") == "cann");
  CHECK(IsDir(tmp / "atrace/not_a_trace_dir/schedule_event_5_20260101000000000002"));
  // Renumbered in marker order: the huge one became 2, and new dirs follow it.
  auto list = store.List(0, 10);
  REQUIRE(list.size() == 2);
  CHECK(list[0].rel_path == "trace_5_5_20260101000000000000/schedule_event_5_20260101000000000003");
  CHECK(list[1].seq == 2);
  EventSpec spec{{5, 5, kProcTime}, EventKind::kSchedule, 5, "", Side::kHost, 0, 0, ""};
  auto r = store.BeginEvent(spec);
  REQUIRE(r.ok());
  CHECK(r->seq == 3);
  // From now on the order log is the truth: a second start reads it, not the markers.
  TraceStore again(**fs, remover, clock, log.logger(), refusals, 10);
  REQUIRE(again.Recover().ok());
  CHECK(again.count(AgeClass::kHost) == 2);
  CHECK(again.count(AgeClass::kDevice) == 1);
}
TEST_CASE("recovery keeps host and device classes from the order log", "[store][recovery]") {
  StoreFixture f(10);
  for (int i = 0; i < 3; ++i) f.Begin(EventKind::kSchedule, Side::kHost);
  for (int i = 0; i < 4; ++i) f.Begin(EventKind::kSchedule, Side::kDevice);
  for (int i = 0; i < 2; ++i) f.Begin(EventKind::kExit);
  f.Restart(10);
  CHECK(f.store_->count(AgeClass::kHost) == 3);
  CHECK(f.store_->count(AgeClass::kDevice) == 4);
  CHECK(f.store_->count(AgeClass::kExit) == 2);
}

TEST_CASE("a symlink planted in an event dir never leads the delete outside", "[store][security]") {
  StoreFixture f(10);
  TempDir outside;
  WriteFile(outside / "precious", "keep me");
  std::filesystem::create_directories(outside / "dir");
  WriteFile(outside / "dir/inner", "keep me too");
  uint64_t first = f.Begin();
  REQUIRE(::symlink((outside / "precious").c_str(), (f.AbsOf(first) + "/link_file").c_str()) == 0);
  REQUIRE(::symlink((outside / "dir").c_str(), (f.AbsOf(first) + "/link_dir").c_str()) == 0);
  uint64_t second = f.Begin();
  // The whole event dir replaced by a symlink to the outside.
  std::filesystem::remove_all(f.AbsOf(second));
  REQUIRE(::symlink(outside.path().c_str(), f.AbsOf(second).c_str()) == 0);
  for (int i = 0; i < 10; ++i) f.Begin();
  CHECK_FALSE(Exists(f.AbsOf(first)));
  CHECK_FALSE(Exists(f.AbsOf(second)));
  CHECK(ReadFile(outside / "precious") == "keep me");
  CHECK(ReadFile(outside / "dir/inner") == "keep me too");
}

TEST_CASE("a planted hard link or symlink file is never opened for writing", "[store][security]") {
  StoreFixture f(10);
  TempDir outside;
  WriteFile(outside / "target", "original");
  uint64_t seq = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
  REQUIRE(::symlink((outside / "target").c_str(), (f.AbsOf(seq) + "/schedule_tracer_sym.txt").c_str()) == 0);
  CHECK_FALSE(f.store_->OpenFile(seq, TraceFileName::Object({"schedule", "sym", false})).ok());
  WriteFile(f.tmp_ / "inside_target", "original");
  REQUIRE(::link((f.tmp_ / "inside_target").c_str(), (f.AbsOf(seq) + "/schedule_tracer_hard.txt").c_str()) == 0);
  auto r = f.store_->OpenFile(seq, TraceFileName::Object({"schedule", "hard", false}));
  CHECK_FALSE(r.ok());
  CHECK(r.status().err() == EACCES);
  CHECK(ReadFile(outside / "target") == "original");
  CHECK(ReadFile(f.tmp_ / "inside_target") == "original");
}
TEST_CASE("process dirs emptied by aging are removed unless held", "[store]") {
  StoreFixture f(10);
  uint64_t a = f.Begin(EventKind::kSchedule, Side::kHost, 201);
  uint64_t b = f.Begin(EventKind::kSchedule, Side::kHost, 202);
  f.store_->HoldProcessDir("trace_202_202_" + kProcTime);
  for (int i = 0; i < 10; ++i) f.Begin(EventKind::kSchedule, Side::kHost, 300);
  CHECK_FALSE(f.OnDisk(a));
  CHECK_FALSE(f.OnDisk(b));
  CHECK_FALSE(Exists(f.trace_dir() + "/trace_201_201_" + kProcTime));
  CHECK(IsDir(f.trace_dir() + "/trace_202_202_" + kProcTime));  // its process is still connected
  f.store_->ReleaseProcessDir("trace_202_202_" + kProcTime);
  CHECK_FALSE(Exists(f.trace_dir() + "/trace_202_202_" + kProcTime));
}

TEST_CASE("a process dir with an exit dir survives aging of its other dirs", "[store]") {
  StoreFixture f(10);
  uint64_t sched = f.Begin(EventKind::kSchedule, Side::kHost, 201);
  uint64_t exit_dir = f.Begin(EventKind::kExit, Side::kHost, 201);
  for (int i = 0; i < 10; ++i) f.Begin(EventKind::kSchedule, Side::kHost, 300);
  CHECK_FALSE(f.OnDisk(sched));
  CHECK(f.OnDisk(exit_dir));
}

TEST_CASE("lowering the record number ages at once", "[store]") {
  StoreFixture f(20);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 15; ++i) seqs.push_back(f.Begin());
  f.store_->SetRecordNum(10);
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  for (int i = 0; i < 5; ++i) CHECK_FALSE(f.OnDisk(seqs[i]));
}

TEST_CASE("vacuum dry run reports without removing", "[store]") {
  StoreFixture f(20);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 15; ++i) seqs.push_back(f.Begin());
  // The order log cannot be written: aging must wait rather than delete unrecorded.
  f.fault_.Fail(FsOp::kAppend, ".atraced_order", EIO, -1);
  f.store_->SetRecordNum(12);
  CHECK(f.store_->count(AgeClass::kHost) == 15);
  CHECK(f.log_.Has(LogLevel::kWarning, "cannot age host dirs now"));
  f.fault_.Clear();
  auto dry = f.store_->Vacuum(true);
  CHECK(dry.removed.size() == 3);
  CHECK(f.store_->count(AgeClass::kHost) == 15);
  for (auto s : seqs) CHECK(f.OnDisk(s));
  auto wet = f.store_->Vacuum(false);
  CHECK(wet.removed == dry.removed);
  CHECK(f.store_->count(AgeClass::kHost) == 12);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(f.OnDisk(seqs[i]));
}
TEST_CASE("the trace directory is re-created if it is deleted", "[store]") {
  StoreFixture f(10);
  f.Begin();
  std::filesystem::remove_all(f.trace_dir());
  uint64_t seq = f.Begin();
  CHECK(f.OnDisk(seq));
}

TEST_CASE("listing reports class, pid, uid and bytes in creation order", "[store]") {
  StoreFixture f(10);
  uint64_t a = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
  uint64_t b = f.Begin(EventKind::kSchedule, Side::kDevice, 101);
  uint64_t c = f.Begin(EventKind::kExit, Side::kHost, 102);
  f.Write(a, "x", "12345");
  f.store_->AddBytes(a, 5);
  auto list = f.store_->List(0, 100);
  REQUIRE(list.size() == 3);
  CHECK(list[0].seq == a);
  CHECK(list[0].bytes == 5);
  CHECK(list[0].pins == 1);
  CHECK(list[1].seq == b);
  CHECK(list[1].side == Side::kDevice);
  CHECK(list[1].pid == 101);
  CHECK(list[1].uid == 1000);
  CHECK(list[2].kind == EventKind::kExit);
  CHECK(f.store_->List(b, 100).size() == 1);
  CHECK(f.store_->List(0, 2).size() == 2);
  f.Restart(10);  // bytes of recovered dirs come from the disk
  auto after = f.store_->List(0, 100);
  REQUIRE(after.size() == 3);
  CHECK(after[0].apparent_bytes == 5);
  CHECK(after[0].bytes % 512 == 0);  // allocated blocks: whole sectors, whatever the length
  (void)c;
}

TEST_CASE("recovery sizes a directory by its allocated blocks, its length beside", "[store]") {
  StoreFixture f(10);
  uint64_t a = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
  f.Write(a, "x", "12345");
  const std::string rel = f.paths_.at(a);
  f.fault_.FakeUsage(rel, {8192, (1ull << 40) + 1});  // a sparse file made through a passed fd
  f.Restart(10);
  CHECK(f.store_->SizeRecovered(100) == 0);
  CHECK(f.store_->space().used() == 8192);  // what the byte budget counts
  auto list = f.store_->List(0, 100);
  REQUIRE(list.size() == 1);
  CHECK(list[0].bytes == 8192);
  CHECK(list[0].apparent_bytes == (1ull << 40) + 1);
}

TEST_CASE("created and aged dirs are reported as structured events", "[store]") {
  struct Recorder : StoreEventSink {
    std::vector<StoreEvent> events;
    void OnStoreEvent(const StoreEvent& e) override { events.push_back(e); }
  } rec;
  StoreFixture f(10);
  f.store_->set_event_sink(&rec);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 11; ++i) seqs.push_back(f.Begin(EventKind::kSchedule, Side::kDevice, 321));
  REQUIRE(rec.events.size() == 12);
  CHECK(rec.events[0].kind == StoreEvent::Kind::kCreated);
  CHECK(rec.events[0].path == f.AbsOf(seqs[0]));
  CHECK(rec.events[0].pid == 321);
  CHECK(rec.events[0].uid == 1000);
  CHECK(rec.events[0].cls == "device");
  // The 11th event ages the first as it begins, and is announced with its first file.
  CHECK(rec.events[11].kind == StoreEvent::Kind::kCreated);
  CHECK(rec.events[11].seq == seqs[10]);
  const StoreEvent& aged = rec.events[10];
  CHECK(aged.kind == StoreEvent::Kind::kAged);
  CHECK(aged.path == f.AbsOf(seqs[0]));
  CHECK(aged.seq == seqs[0]);
}

// ---- The order log against a hostile or interrupted tree -------------------------------

namespace {

void AppendToFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
}

}  // namespace

TEST_CASE("a planted huge sequence in the order log neither wraps the counter nor collides", "[store][security]") {
  StoreFixture f(10);
  uint64_t a = f.Begin();
  uint64_t b = f.Begin();
  // Plant a record near 2^64 for a directory that exists, and one that goes backwards.
  std::string planted_dir = "trace_9_9_" + kProcTime + "/schedule_event_9_20260101000000000009";
  std::filesystem::create_directories(f.trace_dir() + "/" + planted_dir);
  AppendToFile(f.order_log(), "+ 18446744073709551615 h 0 0 0 " + planted_dir + "\n+ 3 h 0 0 0 " + planted_dir + "\n");
  f.Restart(10);
  auto list = f.store_->List(0, 10);
  REQUIRE(list.size() == 3);
  CHECK(list[0].rel_path == f.paths_.at(a));
  CHECK(list[1].rel_path == f.paths_.at(b));
  CHECK(list[2].rel_path == planted_dir);
  CHECK(list[2].seq == 3);  // renumbered: the counter continues from the number of dirs
  CHECK(f.log_.Has(LogLevel::kWarning, "does not increase"));
  // New events get fresh numbers; a file opened in one lands in its own dir only.
  uint64_t c = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
  CHECK(c == 4);
  f.Write(c, "fresh", "mine\n");
  CHECK(ReadFile(f.AbsOf(c) + "/schedule_tracer_fresh.txt") == "mine\n");
  CHECK(ListNames(f.trace_dir() + "/" + planted_dir).empty());
  CHECK(ListNames(f.AbsOf(a)) == std::vector<std::string>{"schedule_tracer_x.txt"});  // the fixture's own
}

TEST_CASE("a removal interrupted by a crash is finished at start-up and never counted", "[store][recovery]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin());
  for (int i = 0; i < 50; ++i) WriteFile(f.AbsOf(seqs[3]) + "/schedule_tracer_f" + std::to_string(i) + ".txt", "x");
  // What a kill -9 mid-delete leaves: the '-' record written, half of the files gone.
  AppendToFile(f.order_log(), "- " + std::to_string(seqs[3]) + "\n");
  for (int i = 0; i < 25; ++i) std::filesystem::remove(f.AbsOf(seqs[3]) + "/schedule_tracer_f" + std::to_string(i) + ".txt");
  f.Restart(10);
  CHECK_FALSE(Exists(f.AbsOf(seqs[3])));
  CHECK(f.store_->count(AgeClass::kHost) == 9);
  CHECK(f.log_.Has(LogLevel::kInfo, "1 interrupted removals resumed"));
  // A record whose directory was never made (a crash between the log and mkdir) is dropped.
  AppendToFile(f.order_log(), "+ 99 h 0 0 0 trace_100_100_" + kProcTime + "/schedule_event_100_20260101000000000099\n");
  f.Restart(10);
  CHECK(f.store_->count(AgeClass::kHost) == 9);
  CHECK(f.log_.Has(LogLevel::kInfo, "1 logged dirs gone"));
}

TEST_CASE("a process dir swapped for a symlink does not break the count", "[store][security]") {
  StoreFixture f(10);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 5; ++i) seqs.push_back(f.Begin(EventKind::kSchedule, Side::kHost, 201));
  // Someone with write access moves pid 201's process dir away and plants a symlink.
  TempDir elsewhere;
  std::string proc = f.trace_dir() + "/trace_201_201_" + kProcTime;
  std::filesystem::rename(proc, elsewhere / "moved");
  REQUIRE(::symlink((elsewhere / "moved").c_str(), proc.c_str()) == 0);
  for (int i = 0; i < 24; ++i) f.Begin(EventKind::kSchedule, Side::kHost, 300);
  f.store_->CollectRemovals();
  // Its dirs left the tree: aging drops them without failing and without following the link.
  CHECK(f.store_->counters().removal_failures == 0);
  CHECK(f.store_->count(AgeClass::kHost) == 10);
  CHECK(ListNames(elsewhere / "moved").size() == 5);
  std::filesystem::remove(proc);  // the symlink itself, so counting does not follow it
  CHECK(f.DiskCount(EventKind::kSchedule) == 10);
  CHECK(f.store_->removals_pending() == 0);
}

TEST_CASE("a sync event at the limit costs at most the direct writer's FileSystem calls plus 3", "[store][cost]") {
  // The direct (CANN-style) writer: mkdir the event dir, open the file, write, remove the
  // oldest dir = 4 calls. The bound is in docs/BENCHMARKS.md too. The oldest is small: the
  // store deletes it on the spot, as the direct writer does (no rename aside, no remover).
  constexpr int kDirectWriterCalls = 4;
  StoreFixture f(10);
  for (int i = 0; i < 10; ++i) f.Begin();
  f.store_->HoldProcessDir("trace_100_100_" + kProcTime);  // a connected client's process
  f.fault_.ResetCalls();
  uint64_t seq = f.Begin(EventKind::kSchedule, Side::kHost, 100, false);
  f.Write(seq, "RUNTIME", "one record\n");
  f.store_->EndEvent(seq);
  f.store_->CollectRemovals();
  INFO("mkdir " << f.fault_.calls(FsOp::kMakeDir) << ", open " << f.fault_.calls(FsOp::kOpenAppend) << ", append "
                << f.fault_.calls(FsOp::kAppend) << ", remove " << f.fault_.calls(FsOp::kRemoveSmallDir));
  CHECK(f.fault_.total_calls() <= kDirectWriterCalls + 3);
  CHECK(f.fault_.calls(FsOp::kMakeDir) == 1);
  CHECK(f.fault_.calls(FsOp::kAppend) == 2);  // the order log record, the trace record
  CHECK(f.fault_.calls(FsOp::kRemoveSmallDir) == 1);
  CHECK(f.fault_.calls(FsOp::kRemoveTree) == 0);
  CHECK(f.fault_.calls(FsOp::kRename) == 0);
  CHECK(f.store_->count(AgeClass::kHost) == 10);
}

// RemoveTree stops reading a directory at a short getdents64 buffer and relies on rmdir to
// say if anything was left (posix_file_system.cc, ReadEntries): a directory that takes many
// buffers, with a subdirectory that does too, must still go whole.
TEST_CASE("a tree that needs many directory reads is removed whole", "[store][fs]") {
  TempDir tmp;
  std::string event = tmp / "atrace/trace_5_5_20260101000000000000/schedule_event_5_20260101000000000001";
  std::filesystem::create_directories(event + "/nested");
  const std::string long_name(200, 'n');  // about 220 bytes a record: 32 KiB hold ~150
  for (int i = 0; i < 400; ++i) {
    WriteFile(event + "/" + long_name + std::to_string(i), "x");
    WriteFile(event + "/nested/" + long_name + std::to_string(i), "x");
  }
  auto fs = PosixFileSystem::Open(tmp.path());
  REQUIRE(fs.ok());
  REQUIRE((*fs)->RemoveTree("trace_5_5_20260101000000000000/schedule_event_5_20260101000000000001").ok());
  CHECK_FALSE(Exists(event));
  CHECK(IsDir(tmp / "atrace/trace_5_5_20260101000000000000"));
}

// RemoveTree keeps the last parent it opened (posix_file_system.h, parent_fd_). A process
// directory removed and made again behind its back leaves that descriptor stale: the next
// directory in the new one must still be found and removed.
TEST_CASE("a process dir made again after a removal does not hide its event dirs from removal", "[store][fs]") {
  TempDir tmp;
  const std::string proc = "trace_5_5_20260101000000000000";
  const std::string first = proc + "/schedule_event_5_20260101000000000001";
  const std::string second = proc + "/schedule_event_5_20260101000000000002";
  std::filesystem::create_directories(tmp / ("atrace/" + first));
  auto fs = PosixFileSystem::Open(tmp.path());
  REQUIRE(fs.ok());
  REQUIRE((*fs)->RemoveTree(first).ok());  // keeps the process dir's descriptor
  std::filesystem::remove_all(tmp / ("atrace/" + proc));
  std::filesystem::create_directories(tmp / ("atrace/" + second));
  WriteFile(tmp / ("atrace/" + second + "/schedule_tracer_x.txt"), "x");
  REQUIRE((*fs)->RemoveTree(second).ok());
  CHECK_FALSE(Exists(tmp / ("atrace/" + second)));
}

// Issue 23, finding 3: CANN makes an event's directory only to write a file in it. An event
// that ends with no file (every FILE_OPEN refused, or none sent) is taken back whole.
TEST_CASE("an event that ends with no file leaves no directory, no record and no count", "[store][discard]") {
  StoreFixture f(10);
  const uint64_t kept = f.Begin();
  EventSpec spec{{100, 100, kProcTime}, EventKind::kSchedule, 100, "", Side::kHost, 0, 1000, ""};
  f.clock_.Advance(1ms);
  auto empty = f.store_->BeginEvent(spec);
  REQUIRE(empty.ok());
  REQUIRE(IsDir(f.trace_dir() + "/" + empty->rel_path));
  CHECK(f.store_->count(AgeClass::kHost) == 2);
  f.store_->EndEvent(empty->seq);
  CHECK_FALSE(IsDir(f.trace_dir() + "/" + empty->rel_path));
  CHECK(f.store_->count(AgeClass::kHost) == 1);
  CHECK(f.store_->counters().events_discarded == 1);
  CHECK(f.store_->counters().dirs_aged == 0);  // taken back, not aged
  CHECK_FALSE(f.store_->Find(empty->seq).has_value());
  // The order log says so: a restart adopts the kept one only, and nothing is "gone".
  f.Restart(10);
  CHECK(f.store_->count(AgeClass::kHost) == 1);
  CHECK(f.log_.Has(LogLevel::kInfo, "0 logged dirs gone"));
  CHECK(f.OnDisk(kept));
}

TEST_CASE("an empty event shared by two reports stays until the last ends, and one file keeps it", "[store][discard]") {
  StoreFixture f(10);
  EventSpec spec{{100, 100, kProcTime}, EventKind::kSchedule, 100, "", Side::kHost, 0, 1000, ""};
  auto a = f.store_->BeginEvent(spec);
  auto b = f.store_->BeginEvent(spec);  // the same path: CANN's objects of one report
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->seq == b->seq);
  f.store_->EndEvent(a->seq);
  CHECK(IsDir(f.trace_dir() + "/" + a->rel_path));  // still pinned by the second
  REQUIRE(f.store_->OpenFile(b->seq, TraceFileName::Object({"schedule", "late", false})).ok());
  f.store_->EndEvent(b->seq);
  CHECK(IsDir(f.trace_dir() + "/" + a->rel_path));
  CHECK(f.store_->count(AgeClass::kHost) == 1);
  CHECK(f.store_->counters().events_discarded == 0);
}

TEST_CASE("an empty event whose directory someone filled is kept, with a warning", "[store][discard]") {
  StoreFixture f(10);
  EventSpec spec{{100, 100, kProcTime}, EventKind::kSchedule, 100, "", Side::kHost, 0, 1000, ""};
  auto r = f.store_->BeginEvent(spec);
  REQUIRE(r.ok());
  WriteFile(f.trace_dir() + "/" + r->rel_path + "/planted", "not the store's");
  f.store_->EndEvent(r->seq);
  CHECK(IsDir(f.trace_dir() + "/" + r->rel_path));
  CHECK(f.store_->count(AgeClass::kHost) == 1);  // counted, so aging removes it in its turn
  CHECK(f.log_.Has(LogLevel::kWarning, "cannot take back the empty event dir"));
}

TEST_CASE("VacuumBy: each verb as the limit it mirrors, never a pinned dir", "[store][vacuum]") {
  StoreFixture f(10);
  const uint64_t exit1 = f.Begin(EventKind::kExit);
  const uint64_t h1 = f.Begin(), h2 = f.Begin();
  const uint64_t pinned = f.Begin(EventKind::kSchedule, Side::kHost, 100, /*end=*/false);
  const uint64_t d1 = f.Begin(EventKind::kSchedule, Side::kDevice), d2 = f.Begin(EventKind::kSchedule, Side::kDevice);
  const uint64_t exit2 = f.Begin(EventKind::kExit);
  for (uint64_t s = 1; s <= 7; ++s) f.store_->AddBytes(s, 4096);  // what the service counts as written
  auto seqs = [&f](const AgingReport& r) {
    std::vector<uint64_t> out;
    for (const auto& path : r.removed) {
      for (uint64_t s = 1; s <= 7; ++s) {
        if (f.AbsOf(s) == f.trace_dir() + "/" + path) out.push_back(s);
      }
    }
    return out;
  };
  SECTION("keep: host and device each, the pinned one counted but kept, exit never") {
    VacuumSpec spec;
    spec.keep = 1;
    spec.dry_run = true;
    auto dry = f.store_->VacuumBy(spec);
    REQUIRE(dry.ok());
    CHECK(seqs(*dry) == std::vector<uint64_t>{h1, h2, d1});
    CHECK(f.store_->count(AgeClass::kHost) == 3);
    spec.dry_run = false;
    auto wet = f.store_->VacuumBy(spec);
    REQUIRE(wet.ok());
    CHECK(seqs(*wet) == std::vector<uint64_t>{h1, h2, d1});
    CHECK(f.OnDisk(pinned));
    CHECK(f.OnDisk(exit1));
    CHECK(f.store_->count(AgeClass::kExit) == 2);
    CHECK(f.store_->counters().dirs_aged_by[static_cast<size_t>(AgingReason::kVacuum)] == 3);
  }
  SECTION("older-than: every class, exit included, not the pinned one") {
    f.clock_.Advance(std::chrono::seconds(10));
    VacuumSpec spec;
    spec.older_than = std::chrono::seconds(5);
    auto wet = f.store_->VacuumBy(spec);
    REQUIRE(wet.ok());
    CHECK(seqs(*wet) == std::vector<uint64_t>{exit1, h1, h2, d1, d2, exit2});
    CHECK(f.OnDisk(pinned));
    CHECK(f.store_->count(AgeClass::kExit) == 0);
  }
  SECTION("max-use: host and device first, then exit; with keep, each dir once") {
    VacuumSpec spec;
    spec.max_use = 0;
    spec.keep = 1;
    spec.dry_run = true;
    auto all = f.store_->VacuumBy(spec);
    REQUIRE(all.ok());
    CHECK(seqs(*all) == std::vector<uint64_t>{exit1, h1, h2, d1, d2, exit2});  // listed in creation order
    const uint64_t each = 4096;
    CHECK(all->bytes == 6 * each);
    spec.keep.reset();
    spec.max_use = f.store_->space().used() - 2 * each;
    auto two = f.store_->VacuumBy(spec);
    REQUIRE(two.ok());
    CHECK(seqs(*two) == std::vector<uint64_t>{h1, h2});
  }
  SECTION("a log that cannot be written removes nothing") {
    f.fault_.Fail(FsOp::kAppend, ".atraced_order", EIO, -1);
    VacuumSpec spec;
    spec.keep = 1;
    auto r = f.store_->VacuumBy(spec);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().err() == EIO);
    CHECK(f.store_->count(AgeClass::kHost) == 3);
    CHECK(f.OnDisk(h1));
  }
}

TEST_CASE("a save cut short or failed is listed incomplete across restarts and a completed one is not",
          "[store][recovery]") {
  StoreFixture f;
  auto begin_save = [&](int32_t pid) {
    f.clock_.Advance(1ms);
    EventSpec spec{{pid, pid, kProcTime}, EventKind::kSchedule, pid, "", Side::kHost, 0, 1000, "", /*save=*/true};
    auto r = f.store_->BeginEvent(spec);
    REQUIRE(r.ok());
    REQUIRE(f.store_->OpenFile(r->seq, TraceFileName::Object({"schedule", "ring", false})).ok());
    return r->rel_path;
  };
  auto incomplete_paths = [&] {
    std::set<std::string> paths;
    for (const EventInfo& e : f.store_->List(0, 100)) {
      if (e.incomplete) paths.insert(e.rel_path);
    }
    return paths;
  };
  f.Begin(EventKind::kSchedule, Side::kHost, 100);  // written by its client: no save record
  begin_save(101);
  const uint64_t completed_seq = f.store_->List(0, 100).back().seq;
  f.store_->EndSave(completed_seq, true);
  f.store_->EndEvent(completed_seq);
  const std::string failed = begin_save(102);
  const uint64_t failed_seq = f.store_->List(0, 100).back().seq;
  const std::string cut_short = begin_save(103);  // the daemon dies while it is written
  // Being written is not incomplete; a save whose write failed is, at once.
  CHECK(incomplete_paths().empty());
  f.store_->EndSave(failed_seq, false);
  f.store_->EndEvent(failed_seq);
  CHECK(incomplete_paths() == std::set<std::string>{failed});
  CHECK(f.store_->IncompleteDirs() == 1);

  f.Restart(10);
  CHECK(incomplete_paths() == std::set<std::string>{failed, cut_short});
  CHECK(f.store_->IncompleteDirs() == 2);
  CHECK(f.store_->count(AgeClass::kHost) == 4);
  CHECK(f.log_.Has(LogLevel::kWarning, "2 event dir(s) hold a save that was cut short"));
  // The start-up rewrite kept the marks: a second restart finds the same.
  f.Restart(10);
  CHECK(incomplete_paths() == std::set<std::string>{failed, cut_short});
  CHECK(f.store_->count(AgeClass::kHost) == 4);
}

TEST_CASE("a directory made for a save is the daemon's: a client's event of its path is refused, across a restart",
          "[store][provenance][security]") {
  StoreFixture f;
  const int32_t pid = 4343;
  f.clock_.Advance(1ms);
  const auto saved_at = f.clock_.Now();
  const std::string time = FormatTraceTime(saved_at);
  EventSpec save{{pid, pid, kProcTime}, EventKind::kStackcore, pid, "", Side::kHost, 0, 1000, "", /*save=*/true};
  auto made = f.store_->BeginEvent(save);
  REQUIRE(made.ok());
  REQUIRE(f.store_->OpenFile(made->seq, TraceFileName::Stackcore({11, pid, "app", time})).ok());
  f.store_->EndSave(made->seq, true);
  f.store_->EndEvent(made->seq);
  CHECK(f.store_->Find(made->seq)->saved);
  // The client's own event, and a device event of the same process that names the save's
  // time, which would be the save's path.
  const uint64_t own = f.Begin(EventKind::kStackcore, Side::kHost, pid);
  CHECK_FALSE(f.store_->Find(own)->saved);
  EventSpec squat{{pid, pid, kProcTime}, EventKind::kStackcore, pid, time, Side::kDevice, 1, 1000, ""};
  auto refused = f.store_->BeginEvent(squat);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().err() == EEXIST);
  CHECK(refused.status().message().find("made by atraced for a save") != std::string::npos);
  // A second save of the same path (the same microsecond) goes in, as before.
  f.clock_.Set(saved_at);
  auto again = f.store_->BeginEvent(save);
  REQUIRE(again.ok());
  CHECK(again->seq == made->seq);
  f.store_->EndSave(again->seq, true);
  f.store_->EndEvent(again->seq);
  // A restart keeps whose each is ('s' in the order log), and the refusal.
  f.Restart(10);
  size_t saved = 0, client = 0;
  for (const EventInfo& e : f.store_->List(0, 100)) (e.saved ? saved : client)++;
  CHECK(saved == 1);
  CHECK(client == 1);
  auto after = f.store_->BeginEvent(squat);
  REQUIRE_FALSE(after.ok());
  CHECK(after.status().err() == EEXIST);
}
