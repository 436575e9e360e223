// Placing ring saves in their ring's sequence (client/atracectl/timeline/ring_windows.h).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "timeline/ring_windows.h"

using namespace atracectl;

namespace {

const std::pair<int64_t, std::string> kTrack{1, "CANN_API"};
const std::vector<std::string> kTexts{"r0", "r1", "r2", "r3", "r4", "r5"};

// Records first..last of the ring, each at its index in seconds plus `shift_us`.
std::vector<SavedRecord> Save(int first, int last, int64_t shift_us = 0) {
  std::vector<SavedRecord> out;
  for (int i = first; i <= last; ++i) out.push_back({i * 1000000 + shift_us, kTexts[static_cast<size_t>(i)]});
  return out;
}

std::vector<bool> Fresh(std::initializer_list<int> bits) { return std::vector<bool>(bits.begin(), bits.end()); }

}  // namespace

TEST_CASE("ring windows: a later save draws only what is after the earlier one, whatever their order and clocks",
          "[atracectl][merge]") {
  RingWindows a;
  CHECK(a.Place(kTrack, Save(0, 2)) == Fresh({1, 1, 1}));
  CHECK(a.Place(kTrack, Save(1, 4, 1)) == Fresh({0, 0, 1, 1}));  // 1 us later: still the same records
  RingWindows b;
  CHECK(b.Place(kTrack, Save(1, 4, 1)) == Fresh({1, 1, 1, 1}));
  CHECK(b.Place(kTrack, Save(0, 2)) == Fresh({1, 0, 0}));  // only r0 is older than what was drawn
  CHECK(b.Place(kTrack, Save(2, 3)) == Fresh({0, 0}));     // contained
  CHECK(b.Place(kTrack, Save(0, 5)) == Fresh({0, 0, 0, 0, 0, 1}));  // contains
}

TEST_CASE("ring windows: records of the same text far apart in time, other tracks and repeats within a save are new",
          "[atracectl][merge]") {
  RingWindows w;
  CHECK(w.Place(kTrack, Save(0, 1)) == Fresh({1, 1}));
  CHECK(w.Place(kTrack, Save(0, 1, 5000000)) == Fresh({1, 1}));  // 5 s later: other records with the same texts
  CHECK(w.Place({2, "CANN_API"}, Save(0, 1)) == Fresh({1, 1}));  // another process's track
  RingWindows r;
  const std::vector<SavedRecord> repeated{{1, "same"}, {2, "same"}, {3, "same"}};
  CHECK(r.Place(kTrack, repeated) == Fresh({1, 1, 1}));
  const std::vector<SavedRecord> later{{2, "same"}, {3, "same"}, {4, "same"}};
  CHECK(r.Place(kTrack, later) == Fresh({0, 0, 1}));
}
