// The aging rules, as pure functions: no disk, no socket, no clock. The byte limits' arithmetic
// is in byte_budget.h; the store (trace_store.h) applies both.
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
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "atraced/proto/wire.h"
#include "atraced/store/names.h"

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

// Which directory goes first when a limit asks for one (`aging-policy`).
//  - fifo: the oldest removable one: the seed's "delete the oldest". The default.
//  - fair: the oldest removable one of the uid that holds the most directories of the pool,
//    as systemd-coredump does, so one crash-looping user cannot flush out every other user's
//    evidence. Never the process group: a looper that calls setsid() per event would be a
//    new group each time. Ties go to the uid whose candidate is older.
enum class AgingPolicy : uint8_t { kFifo = 0, kFair = 1 };
std::optional<AgingPolicy> ParseAgingPolicy(std::string_view text);  // "fifo" | "fair"
const char* AgingPolicyName(AgingPolicy policy);

// Why a directory was aged: the limit that asked for it. Counted and reported per reason.
enum class AgingReason : uint8_t { kCount = 0, kMaxUse = 1, kKeepFree = 2, kAge = 3, kVacuum = 4 };
inline constexpr size_t kAgingReasonCount = 5;
inline constexpr AgingReason kAllAgingReasons[kAgingReasonCount] = {
    AgingReason::kCount, AgingReason::kMaxUse, AgingReason::kKeepFree, AgingReason::kAge, AgingReason::kVacuum};
const char* AgingReasonName(AgingReason reason);  // "count", "bytes", "keep-free", "age", "vacuum"
// AGED_DUMPS sends the reason as its value (wire.h's ATR_AGED_*): they may not move.
static_assert(static_cast<unsigned>(AgingReason::kCount) == ATR_AGED_COUNT &&
              static_cast<unsigned>(AgingReason::kMaxUse) == ATR_AGED_BYTES &&
              static_cast<unsigned>(AgingReason::kKeepFree) == ATR_AGED_KEEP_FREE &&
              static_cast<unsigned>(AgingReason::kAge) == ATR_AGED_AGE &&
              static_cast<unsigned>(AgingReason::kVacuum) == ATR_AGED_VACUUM);

// One directory of a pool, oldest first, as the policy planner sees it.
struct AgingCandidate {
  uint64_t bytes = 0;
  int64_t group = 0;       // the uid that made it (in the order log)
  bool removable = false;  // not pinned, not the directory being written
};

// Indices into `pool` (oldest first) of the directories to remove under `policy`, taken one
// at a time until `enough(victims_taken, bytes_taken)` says so or nothing removable is left.
// Costs O(pool) for fair (it counts the groups), and O(victims + pinned skipped) for fifo.
template <class Enough>
std::vector<size_t> PlanByPolicy(AgingPolicy policy, std::span<const AgingCandidate> pool, Enough enough) {
  std::vector<size_t> victims;
  uint64_t bytes = 0;
  if (policy == AgingPolicy::kFifo) {
    for (size_t i = 0; i < pool.size() && !enough(victims.size(), bytes); ++i) {
      if (!pool[i].removable) continue;
      victims.push_back(i);
      bytes += pool[i].bytes;
    }
    return victims;
  }
  struct Group {
    size_t held = 0;              // directories of the pool, pinned ones included
    std::vector<size_t> movable;  // removable ones, oldest first
    size_t next = 0;
  };
  std::unordered_map<int64_t, Group> groups;
  for (size_t i = 0; i < pool.size(); ++i) {
    Group& g = groups[pool[i].group];
    ++g.held;
    if (pool[i].removable) g.movable.push_back(i);
  }
  while (!enough(victims.size(), bytes)) {
    Group* best = nullptr;
    for (auto& [key, g] : groups) {
      if (g.next == g.movable.size()) continue;
      if (best == nullptr || g.held > best->held ||
          (g.held == best->held && g.movable[g.next] < best->movable[best->next])) {
        best = &g;
      }
    }
    if (best == nullptr) break;
    const size_t i = best->movable[best->next++];
    --best->held;
    victims.push_back(i);
    bytes += pool[i].bytes;
  }
  return victims;
}

}  // namespace atraced
