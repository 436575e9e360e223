// The aging rule, as a pure function: no disk, no socket, no clock.
//
// Each class (host, device) keeps at most `limit` event directories across the whole root.
// Given the class's directories ordered oldest first (by creation sequence, never by a
// clock), the plan is the oldest *removable* ones, as many as the class exceeds its limit.
// A directory is not removable while it is pinned (a client is writing into it, or it is the
// one being created) or after its removal failed in the current pass; the next-oldest one is
// taken instead. If too few are removable, the class stays over its limit until a pin is
// released — the plan never removes a pinned directory to make the numbers work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "atraced/core/names.h"

namespace atraced {

// Classes with separate limits: host and device share `record-num`; `exit` directories have
// their own bound, `exit-record-num` (CANN never ages them; a crash-looping program would
// otherwise fill the disk with them).
enum class AgeClass : uint8_t { kHost = 0, kDevice = 1, kExit = 2 };
inline constexpr size_t kAgeClassCount = 3;
inline constexpr AgeClass kAllAgeClasses[kAgeClassCount] = {AgeClass::kHost, AgeClass::kDevice, AgeClass::kExit};

// The bound on exit directories (newest kept), and its allowed range.
inline constexpr uint32_t kExitRecordNumDefault = 100;
inline constexpr uint32_t kExitRecordNumMin = 10;
inline constexpr uint32_t kExitRecordNumMax = 100000;

inline AgeClass ClassOf(EventKind kind, Side side) {
  if (kind == EventKind::kExit) return AgeClass::kExit;
  return side == Side::kDevice ? AgeClass::kDevice : AgeClass::kHost;
}
const char* AgeClassName(AgeClass c);  // "host", "device", "exit"

// Returns iterators to the directories to remove, oldest first. Stops scanning as soon as
// enough are found, so the cost is the number removed plus the pinned ones skipped, not the
// size of the class.
template <class It, class IsRemovable>
std::vector<It> PlanAging(It oldest, It end, size_t count, size_t limit, IsRemovable removable) {
  std::vector<It> victims;
  if (count <= limit) return victims;
  const size_t excess = count - limit;
  for (It it = oldest; it != end && victims.size() < excess; ++it) {
    if (removable(*it)) victims.push_back(it);
  }
  return victims;
}

}  // namespace atraced
