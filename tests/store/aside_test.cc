// Aging moves a directory aside before its delete (issue 23, finding 2): one rename into
// <root>/atrace/.atraced_aged, so the tree holds exactly what the store counts the moment
// the caller replies, however long the delete takes. Recovery empties the aside directory.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "atraced/store/names.h"
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

// Keeps the deletes until the test runs them: a remover as slow as a big tree on a slow disk.
class HeldRemover final : public Remover {
 public:
  explicit HeldRemover(FileSystem& fs) : fs_(fs) {}
  void Submit(RemovalJob job) override { held_.push_back(std::move(job)); }
  std::vector<RemovalDone> TakeFinished() override { return std::exchange(done_, {}); }
  size_t outstanding() const override { return held_.size() + done_.size(); }
  void Drain() override { RunAll(); }
  void RunAll() {
    for (RemovalJob& j : held_) {
      Status st = RemoveEventDir(fs_, j);
      done_.push_back({std::move(j), std::move(st)});
    }
    held_.clear();
  }
  const std::vector<RemovalJob>& held() const { return held_; }

 private:
  FileSystem& fs_;
  std::vector<RemovalJob> held_;
  std::vector<RemovalDone> done_;
};

struct AsideFixture {
  TempDir tmp;
  FakeClock clock;
  CaptureLog log;
  RefusalLog refusals;
  std::unique_ptr<PosixFileSystem> posix = Open(tmp.path());
  FaultFileSystem fault{*posix};
  HeldRemover remover{fault};
  std::unique_ptr<TraceStore> store;
  std::map<uint64_t, std::string> paths;

  // `remove_now`: whether aged directories may be deleted on the spot (small ones are, see
  // TraceStore::kRemoveNowMaxFiles). Off, those deletes fail, so that every aged directory
  // takes the aside way these tests are about, as one whose delete on the spot failed does.
  explicit AsideFixture(bool remove_now = false) {
    if (!remove_now) fault.Fail(FsOp::kRemoveSmallDir, "", EBUSY);
    Restart();
  }
  static std::unique_ptr<PosixFileSystem> Open(const std::string& root) {
    auto fs = PosixFileSystem::Open(root);
    REQUIRE(fs.ok());
    return std::move(*fs);
  }
  void Restart() {
    store = std::make_unique<TraceStore>(fault, remover, clock, log.logger(), refusals, 10);
    REQUIRE(store->Recover().ok());
  }
  // An event of `files` empty files.
  uint64_t Begin(int32_t pid = 100, int files = 1) {
    clock.Advance(1ms);
    auto r = store->BeginEvent({{pid, pid, kProcTime}, EventKind::kSchedule, pid, "", Side::kHost, 0, 1000, ""});
    REQUIRE(r.ok());
    paths[r->seq] = r->rel_path;
    for (int i = 0; i < files; ++i) {
      REQUIRE(store->OpenFile(r->seq, TraceFileName::Object({"schedule", "x" + std::to_string(i), false})).ok());
    }
    store->EndEvent(r->seq);
    return r->seq;
  }
  std::string trace_dir() const { return tmp.path() + "/atrace"; }
  std::string aside() const { return trace_dir() + "/.atraced_aged"; }
  bool InTree(uint64_t seq) { return IsDir(trace_dir() + "/" + paths.at(seq)); }
  size_t EventDirsInTree() {
    size_t n = 0;
    for (const auto& proc : ListNames(trace_dir())) {
      if (!ParseProcessDirName(proc)) continue;
      for (const auto& ev : ListNames(trace_dir() + "/" + proc)) n += ParseEventDirName(ev).has_value();
    }
    return n;
  }
};

}  // namespace

TEST_CASE("an aged directory leaves the tree before its delete runs", "[store][aside]") {
  AsideFixture f;
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin());
  const uint64_t eleventh = f.Begin();
  // The delete has not run, and yet the tree holds the limit: the oldest was moved aside.
  REQUIRE(f.remover.held().size() == 1);
  CHECK(f.EventDirsInTree() == 10);
  CHECK_FALSE(f.InTree(seqs[0]));
  CHECK(f.InTree(eleventh));
  const std::string event_name = f.paths.at(seqs[0]).substr(f.paths.at(seqs[0]).find('/') + 1);
  CHECK(ListNames(f.aside()) == std::vector<std::string>{"1_" + event_name});
  CHECK(f.remover.held().front().rel_path == ".atraced_aged/1_" + event_name);
  f.remover.RunAll();
  f.store->CollectRemovals();
  CHECK(ListNames(f.aside()).empty());
  CHECK(f.store->removals_pending() == 0);
  CHECK(f.fault.calls(FsOp::kRename) == 1);
}

TEST_CASE("the same name can be made again while its aged namesake is still being deleted", "[store][aside]") {
  AsideFixture f;
  // Age the oldest, then make its very path again (a clock stepped back): before the aside
  // directory that was refused with EBUSY until the delete was done.
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin());
  f.Begin();
  REQUIRE_FALSE(f.InTree(seqs[0]));
  f.clock.Set(f.clock.Now() - 10ms);  // back to the first event's time: its name again
  auto again = f.store->BeginEvent({{100, 100, kProcTime}, EventKind::kSchedule, 100, "", Side::kHost, 0, 1000, ""});
  REQUIRE(again.ok());
  CHECK(again->rel_path == f.paths.at(seqs[0]));
  CHECK(IsDir(f.trace_dir() + "/" + again->rel_path));
}

TEST_CASE("recovery deletes what an earlier run left aside and names on past it", "[store][aside]") {
  AsideFixture f;
  // A daemon that was killed after its renames, before its deletes.
  std::filesystem::create_directories(f.aside() + "/41_schedule_event_7_20260101000000000000/x");
  std::filesystem::create_directories(f.aside() + "/7_stackcore_event_8_20260101000000000000");
  { std::ofstream(f.aside() + "/41_schedule_event_7_20260101000000000000/x/f") << "data"; }
  { std::ofstream(f.aside() + "/stray") << "not a dir, still ours to delete"; }
  f.Restart();
  CHECK(f.store->removals_pending() == 3);
  f.remover.RunAll();
  f.store->CollectRemovals();
  CHECK(ListNames(f.aside()).empty());
  CHECK(f.store->removals_pending() == 0);
  for (int i = 0; i < 11; ++i) f.Begin();
  REQUIRE(ListNames(f.aside()).size() == 1);
  CHECK(ListNames(f.aside()).front().starts_with("42_"));
}

TEST_CASE("a removed aside directory is made again at the next aging", "[store][aside]") {
  AsideFixture f;
  std::filesystem::remove(f.aside());
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 11; ++i) seqs.push_back(f.Begin());
  CHECK(f.EventDirsInTree() == 10);
  CHECK(ListNames(f.aside()).size() == 1);
  CHECK(f.store->counters().aside_failures == 0);
}

TEST_CASE("a directory that cannot be moved aside is deleted in place and the count stays right", "[store][aside]") {
  AsideFixture f;
  f.fault.Fail(FsOp::kRename, "schedule_event_", EACCES);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 13; ++i) seqs.push_back(f.Begin());
  CHECK(f.store->counters().aside_failures == 3);
  // Logged at the first and second failure, not at every one.
  CHECK(f.log.Count(LogLevel::kWarning, "aside") == 2);
  CHECK(f.log.Has(LogLevel::kWarning, "cannot move aged dir " + f.trace_dir() + "/" + f.paths.at(seqs[0])));
  CHECK(f.EventDirsInTree() == 13);  // still there until the remover runs: the old behaviour
  f.remover.RunAll();
  f.store->CollectRemovals();
  CHECK(f.EventDirsInTree() == 10);
  CHECK_FALSE(f.InTree(seqs[0]));
  CHECK(f.store->removals_pending() == 0);
}

TEST_CASE("aging never pulls in a process dir moved out of the tree or swapped for a symlink, on the spot or aside",
          "[store][aside][security]") {
  const bool remove_now = GENERATE(false, true);
  const bool swap_for_link = GENERATE(false, true);
  AsideFixture f(remove_now);
  for (int i = 0; i < 5; ++i) f.Begin(201);
  // Someone moves pid 201's process dir out while the store holds its descriptor (and
  // plants a symlink to where it went).
  TempDir elsewhere;
  const std::string proc = f.trace_dir() + "/trace_201_201_" + kProcTime;
  std::filesystem::rename(proc, elsewhere.path() + "/moved");
  if (swap_for_link) REQUIRE(::symlink((elsewhere.path() + "/moved").c_str(), proc.c_str()) == 0);
  for (int i = 0; i < 20; ++i) f.Begin(300);
  f.remover.RunAll();
  f.store->CollectRemovals();
  // Its dirs left the tree: they are dropped from the count, and nothing outside is touched.
  CHECK(f.store->count(AgeClass::kHost) == 10);
  CHECK(ListNames(elsewhere.path() + "/moved").size() == 5);
  CHECK(ListNames(f.aside()).empty());
  CHECK(f.store->counters().aside_failures == 0);
  CHECK(f.store->counters().removal_failures == 0);
}

// The aside directory is for deletes too big for the reply's path. A small directory (an
// event's few files, as CANN's writer deletes before its save returns) is deleted on the
// spot: one openat2, getdents64, an unlinkat per file and one for the directory, one close,
// instead of a rename, the check that its process directory is still in the tree, and the
// remover's same deletes.
TEST_CASE("a small aged directory is deleted on the spot: nothing aside, nothing for the remover", "[store][aside]") {
  AsideFixture f(/*remove_now=*/true);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin(100, TraceStore::kRemoveNowMaxFiles));
  f.fault.ResetCalls();
  f.Begin();
  CHECK_FALSE(std::filesystem::exists(f.trace_dir() + "/" + f.paths.at(seqs[0])));
  CHECK(f.EventDirsInTree() == 10);
  CHECK(f.remover.held().empty());
  CHECK(ListNames(f.aside()).empty());
  CHECK(f.store->removals_pending() == 0);
  CHECK(f.fault.calls(FsOp::kRemoveSmallDir) == 1);
  CHECK(f.fault.calls(FsOp::kRename) == 0);
  CHECK(f.store->count(AgeClass::kHost) == 10);
}

TEST_CASE("an aged directory of more files than a delete on the spot takes goes aside for the remover",
          "[store][aside]") {
  AsideFixture f(/*remove_now=*/true);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin(100, TraceStore::kRemoveNowMaxFiles + 1));
  f.Begin();
  CHECK_FALSE(f.InTree(seqs[0]));
  CHECK(f.EventDirsInTree() == 10);
  REQUIRE(f.remover.held().size() == 1);
  CHECK(ListNames(f.aside()).size() == 1);
  // Whole: the look at it removed nothing.
  CHECK(ListNames(f.aside() + "/" + ListNames(f.aside()).front()).size() == TraceStore::kRemoveNowMaxFiles + 1);
  f.remover.RunAll();
  f.store->CollectRemovals();
  CHECK(ListNames(f.aside()).empty());
  CHECK(f.store->removals_pending() == 0);
}

TEST_CASE("a vacuum of many directories leaves their deletes to the remover", "[store][aside]") {
  AsideFixture f(/*remove_now=*/true);
  for (int i = 0; i < 10; ++i) f.Begin();
  VacuumSpec spec;
  spec.keep = 0;
  auto report = f.store->VacuumBy(spec);
  REQUIRE(report.ok());
  CHECK(report->removed.size() == 10);
  CHECK(f.EventDirsInTree() == 0);
  CHECK(f.remover.held().size() == 10);  // moved aside on the loop, deleted off it
  f.remover.RunAll();
  f.store->CollectRemovals();
  CHECK(ListNames(f.aside()).empty());
}

TEST_CASE("a small directory whose delete on the spot fails goes aside, and the remover deletes it", "[store][aside]") {
  AsideFixture f(/*remove_now=*/true);
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 10; ++i) seqs.push_back(f.Begin());
  const std::string event_name = f.paths.at(seqs[0]).substr(f.paths.at(seqs[0]).find('/') + 1);
  f.fault.Fail(FsOp::kRemoveSmallDir, event_name, EIO, 1);
  f.Begin();
  CHECK_FALSE(f.InTree(seqs[0]));
  CHECK(f.EventDirsInTree() == 10);
  REQUIRE(f.remover.held().size() == 1);
  f.remover.RunAll();
  f.store->CollectRemovals();
  CHECK(ListNames(f.aside()).empty());
  CHECK(f.store->counters().removal_failures == 0);
}
