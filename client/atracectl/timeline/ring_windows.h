// Which records of a ring save were already drawn from another save of the same ring.
//
// A save the daemon wrote says where each of its records sits in its ring
// (proto/ring_positions.h: the ring's identity and each record's position): such records are
// the same record exactly when their track (the process directory: pid and start time, and the
// object), ring and position are, whatever their text, time or the order the saves are read
// in (RingPositionsSeen). A save without positions (written before them, or by a client through
// FILE_APPEND) is aligned instead (RingWindows):
//
// A process's ring is saved more than once (a report, then a later dump): each save holds a
// window of the ring's one sequence of records, and two windows overlap where the later
// save still held what the earlier one did. A record is the same record in both when it has
// the same place in that sequence, not when it has the same time: each save places records
// on the wall clock afresh (the counter clock's anchors move), so one record can be a
// microsecond apart in two saves, and two records can share a microsecond.
//
// So the records of each save are placed in the sequence by aligning the save with the
// window known so far: the offset at which every overlapping record has the same text (by a
// 64-bit hash) and a time within kSameRecordSkewUs; of several such offsets (a text repeated
// over and over), the one whose times agree best, then the largest overlap. What lies
// outside the overlap is new; the window grows by it. The order in which saves are read
// (their placement in a bundle, their directory times) cannot change the result. A record
// repeated within one save stays repeated. What is held per track is 16 bytes a record of
// the window, at most kMaxWindow records; past that, the oldest are forgotten.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace atracectl {

inline constexpr int64_t kSameRecordSkewUs = 1000000;
inline constexpr size_t kMaxWindow = 1u << 20;

struct SavedRecord {
  int64_t ts = 0;
  std::string_view text;
};

// Records by their identity: (track, ring, position). Held as runs of positions per ring.
class RingPositionsSeen {
 public:
  // True the first time the record at `position` of ring `ring` of `track` is added.
  bool Add(const std::pair<int64_t, std::string>& track, uint64_t ring, uint64_t position);

 private:
  // Per (track, ring): runs [first, last] of the positions seen, by first.
  std::map<std::tuple<int64_t, std::string, uint64_t>, std::map<uint64_t, uint64_t>> seen_;
};

class RingWindows {
 public:
  // The records of one save of track `track` (in the save's order): true for each that is new.
  std::vector<bool> Place(const std::pair<int64_t, std::string>& track, const std::vector<SavedRecord>& save);

 private:
  struct Seen {
    uint64_t hash;
    int64_t ts;
  };
  std::map<std::pair<int64_t, std::string>, std::vector<Seen>> windows_;
};

}  // namespace atracectl
