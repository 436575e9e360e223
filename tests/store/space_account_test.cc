// The space account: how many bytes the byte limits ask to be freed before a write, from
// the running sums alone (no system call between samples).
#include <catch2/catch.hpp>

#include "atraced/store/space_account.h"

namespace atraced {
namespace {

using namespace std::chrono_literals;

const SpaceAccount::TimePoint kT0{std::chrono::seconds(1000)};

SpaceAccount Resolved(uint64_t max_use, uint64_t keep_free, uint64_t available) {
  SpaceAccount a;
  a.Resolve(ByteLimits{max_use, keep_free, 1u << 30}, available, kT0);
  return a;
}

TEST_CASE("space account: nothing is asked of a write before the limits are resolved", "[store][space]") {
  SpaceAccount a;
  a.AddUse(AgeClass::kHost, 1u << 30);
  CHECK(a.NeedFor(1u << 20).bytes == 0);
}

TEST_CASE("space account: max-use counts the directories' use and what jobs in flight reserved", "[store][space]") {
  SpaceAccount a = Resolved(1000, 0, 1u << 30);
  a.AddUse(AgeClass::kHost, 600);
  a.AddUse(AgeClass::kExit, 300);
  CHECK(a.used() == 900);
  CHECK(a.used(AgeClass::kHost) == 600);
  CHECK(a.NeedFor(100).bytes == 0);
  a.Reserve(50);  // a save on an I/O worker may still write 50
  ByteNeed need = a.NeedFor(100);
  CHECK(need.limit == ByteLimit::kMaxUse);
  CHECK(need.bytes == 50);
  a.Unreserve(80);  // more than reserved: never below zero
  CHECK(a.reserved() == 0);
  a.SubUse(AgeClass::kHost, 5000);  // more than used: the class and the total stop at zero
  CHECK(a.used(AgeClass::kHost) == 0);
  CHECK(a.used() == 300);
}

TEST_CASE("space account: free space is the last sample, minus writes, plus deletes, until sampled again",
          "[store][space]") {
  SpaceAccount a = Resolved(1u << 30, 500, 1000);
  a.Wrote(300);
  CHECK(a.free_bytes() == 700);
  a.Wrote(400);
  CHECK(a.free_bytes() == 300);
  CHECK(a.NeedFor(0).limit == ByteLimit::kKeepFree);
  CHECK(a.NeedFor(0).bytes == 200);
  a.Freed(250);
  CHECK(a.free_bytes() == 550);
  a.NotFreed(100);  // that delete failed
  CHECK(a.free_bytes() == 450);
  a.Wrote(10000);
  CHECK(a.free_bytes() == 0);  // never below zero
  a.Sample(2000, 100, kT0 + 1s);  // 100 still being deleted: not in the sample yet
  CHECK(a.free_bytes() == 2100);
}

TEST_CASE("space account: a new sample is wanted once the interval passed or a delete finished", "[store][space]") {
  SpaceAccount a = Resolved(1u << 30, 0, 1000);
  CHECK_FALSE(a.WantsSample(kT0));
  CHECK(a.WantsSample(kT0 + SpaceAccount::kResampleInterval));
  a.DeletesDone();
  CHECK(a.WantsSample(kT0));
  a.SampleFailed(kT0 + 1ms);  // a failed sample keeps the figure, restarts the interval
  CHECK_FALSE(a.WantsSample(kT0 + 2ms));
  CHECK(a.free_bytes() == 1000);
}

TEST_CASE("space account: bytes a uid holds through passed descriptors count against that uid only",
          "[store][space]") {
  SpaceAccount a = Resolved(1000, 0, 1u << 30);
  a.AddUse(AgeClass::kHost, 900);
  a.Hold(7, 600, true);  // 600 of the 900 written through uid 7's descriptors
  CHECK(a.held() == 600);
  CHECK(a.held_by(7) == 600);
  CHECK(a.anyone_holds());
  // Others see 300 used: aging cannot free what a descriptor keeps.
  CHECK(a.NeedFor(500).bytes == 0);
  // uid 7 sees its own bytes: 900 used, so 500 more needs 400 freed.
  CHECK(a.NeedForHolder(500, 7).bytes == 400);
  CHECK(a.NeedForHolder(500, 8).bytes == 0);  // not a holder
  CHECK(a.Release(7, 1000) == 600);           // at most what it held
  CHECK_FALSE(a.anyone_holds());
  a.Unlist(600);
  CHECK(a.NeedFor(500).bytes == 400);  // now the bytes are anyone's to age
  CHECK(a.Release(7, 10) == 0);
}

}  // namespace
}  // namespace atraced
