// Who unmaps a ring, and when (atraced/rings/unmapper.h): a held ring's mapping goes to its
// unmapper exactly once, with its last holder, a save in flight included; the background
// unmapper unmaps everything it is handed, by Drain and at the latest by its destructor.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "atraced/rings/held_ring.h"
#include "atraced/rings/unmapper.h"
#include "support/test_rings.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

// Remembers what it was handed, from which thread, and unmaps it.
struct RecordingUnmapper final : Unmapper {
  void Unmap(const void* addr, size_t size) override {
    std::lock_guard<std::mutex> lock(mu);
    handed.emplace_back(addr, size);
    ::munmap(const_cast<void*>(addr), size);
  }
  std::mutex mu;
  std::vector<std::pair<const void*, size_t>> handed;
};

// Live mappings of memfds named `name`, from /proc/self/maps. Not "is this address mapped":
// once unmapped, an address may be mapped again at once by anything in the process (the
// sanitizers' runtimes do), while a mapping of our own memfd cannot come back by itself.
size_t MappingsOf(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/memfd:" + name + " ") != std::string::npos) ++n;
  }
  return n;
}

// `pages` of a memfd named "unmapper-test", mapped shared; the descriptor is closed, the
// mapping alone keeps it.
void* MapPages(size_t pages) {
  UniqueFd fd(::memfd_create("unmapper-test", MFD_CLOEXEC));
  REQUIRE(fd.valid());
  REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(pages * 4096)) == 0);
  void* p = ::mmap(nullptr, pages * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  REQUIRE(p != MAP_FAILED);
  static_cast<char*>(p)[0] = 1;  // a page really backed
  return p;
}

proto::RingRegister Registration(uint32_t msg_num = 4, uint32_t msg_size = 64) {
  proto::RingRegister m;
  m.object_id = 7;
  m.msg_num = msg_num;
  m.msg_size = msg_size;
  m.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(msg_num, msg_size));
  m.name = "obj7";
  return m;
}

}  // namespace

TEST_CASE("a held ring goes to its unmapper once, when its last holder lets go", "[unmapper]") {
  RecordingUnmapper unmapper;
  const proto::RingRegister m = Registration();
  std::optional<RingSavePlan> plan;
  {
    Result<HeldRing> ring = HeldRing::Map(RingWith({"first", "second"}), m, unmapper);
    REQUIRE(ring.ok());
    plan = ring->PlanSave(nullptr);
    REQUIRE(plan);
  }
  // The ring is gone, the save planned from it is not: the mapping stays.
  CHECK(unmapper.handed.empty());
  CHECK(MappingsOf("ring") == 1);
  std::vector<std::string> problems;
  CHECK(plan->Format(&problems).find("second") != std::string::npos);
  plan.reset();
  REQUIRE(unmapper.handed.size() == 1);
  CHECK(unmapper.handed[0].second == m.ring_bytes);
  CHECK(MappingsOf("ring") == 0);  // test_rings.h names its memfds "ring"
}

TEST_CASE("a ring refused after mapping still goes to its unmapper, one refused before it does not", "[unmapper]") {
  RecordingUnmapper unmapper;
  SECTION("the header disagrees with the registration: mapped, checked, handed back") {
    proto::RingRegister m = Registration();
    UniqueFd fd = EmptyRing();
    atr_ring_header h{};
    REQUIRE(::pread(fd.get(), &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h));
    h.magic ^= 1;
    REQUIRE(::pwrite(fd.get(), &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h));
    Result<HeldRing> ring = HeldRing::Map(std::move(fd), m, unmapper);
    REQUIRE_FALSE(ring.ok());
    CHECK(unmapper.handed.size() == 1);
  }
  SECTION("the memfd's size disagrees: never mapped, nothing to hand back") {
    proto::RingRegister m = Registration();
    m.ring_bytes += 4096;
    Result<HeldRing> ring = HeldRing::Map(EmptyRing(), m, unmapper);
    REQUIRE_FALSE(ring.ok());
    CHECK(unmapper.handed.empty());
  }
}

TEST_CASE("the background unmapper unmaps what it is handed, by Drain", "[unmapper]") {
  BackgroundUnmapper unmapper;
  std::vector<void*> maps;
  for (int i = 0; i < 32; ++i) maps.push_back(MapPages(2));
  REQUIRE(MappingsOf("unmapper-test") == 32);
  for (void* p : maps) unmapper.Unmap(p, 2 * 4096);
  unmapper.Drain();
  CHECK(MappingsOf("unmapper-test") == 0);
  CHECK(unmapper.pending() == std::pair<size_t, size_t>{0, 0});
}

TEST_CASE("the background unmapper's destructor unmaps what is still queued", "[unmapper]") {
  std::vector<void*> maps;
  {
    BackgroundUnmapper unmapper;
    // Handed from several threads at once, as holders on the loop and on workers do.
    std::vector<std::thread> holders;
    std::mutex mu;
    for (int t = 0; t < 4; ++t) {
      holders.emplace_back([&] {
        for (int i = 0; i < 64; ++i) {
          void* p = MapPages(1);
          {
            std::lock_guard<std::mutex> lock(mu);
            maps.push_back(p);
          }
          unmapper.Unmap(p, 4096);
        }
      });
    }
    for (std::thread& t : holders) t.join();
  }
  REQUIRE(maps.size() == 256);
  CHECK(MappingsOf("unmapper-test") == 0);
}

TEST_CASE("the inline unmapper unmaps at once, on the caller's thread", "[unmapper]") {
  void* p = MapPages(3);
  REQUIRE(MappingsOf("unmapper-test") == 1);
  InlineUnmapper::Instance().Unmap(p, 3 * 4096);
  CHECK(MappingsOf("unmapper-test") == 0);
}
