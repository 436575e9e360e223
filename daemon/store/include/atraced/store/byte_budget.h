// The byte limits of the trace root (`max-use`, `keep-free`) as pure functions: no disk, no
// clock, so every limit can be tested with made-up figures.
//
// Cost model (what the store is to do with these): usage is a running sum kept by the store
// (AddBytes on every append and file close), so no request walks a tree; free space comes
// from one fstatvfs per aging pass, never per append. BytesToFree is then O(1) and
// PlanByteAging costs the directories it removes plus the pinned ones it skips.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace atraced {

// Which byte limit a pass is working for, or refusing because of.
enum class ByteLimit : uint8_t { kNone = 0, kMaxUse = 1, kKeepFree = 2 };
const char* ByteLimitName(ByteLimit limit);  // "none", "max-use", "keep-free"

// A size setting as written: journald's syntax, an integer with an optional suffix K, M, G or
// T (powers of 1024) or %, a share of the root's file system.
struct SizeSpec {
  uint64_t value = 0;    // bytes, or percent (0-100) when `percent`
  bool percent = false;
  bool operator==(const SizeSpec&) const = default;
};

// nullopt for anything else: empty, a sign, a fraction, an unknown suffix, over 100%, or a
// byte count that does not fit in 64 bits.
std::optional<SizeSpec> ParseSizeSpec(std::string_view text);
// The setting in bytes on a file system of `fs_bytes`.
uint64_t ResolveSize(const SizeSpec& spec, uint64_t fs_bytes);

// journald's defaults (SystemMaxUse, SystemKeepFree): 10% and 15% of the file system, each
// capped at 4 GiB. The cap applies to the defaults only; an explicit setting is taken as is.
inline constexpr uint64_t kDefaultByteCap = 4ull << 30;
inline uint64_t DefaultMaxUse(uint64_t fs_bytes) { return std::min(fs_bytes / 10, kDefaultByteCap); }
inline uint64_t DefaultKeepFree(uint64_t fs_bytes) { return std::min(fs_bytes / 100 * 15, kDefaultByteCap); }

struct ByteNeed {
  uint64_t bytes = 0;                  // to free before `incoming` more may be written
  ByteLimit limit = ByteLimit::kNone;  // the limit that asks for more (max-use on a tie)
};

// What must be freed so that `used + incoming` stays within `max_use` and the file system
// keeps at least `keep_free` free after `incoming` more bytes. Reaching a limit exactly is
// allowed; one byte over asks for one byte.
ByteNeed BytesToFree(uint64_t used, uint64_t incoming, uint64_t max_use, uint64_t fs_free, uint64_t keep_free);

template <class It>
struct BytePlan {
  std::vector<It> victims;  // oldest first
  uint64_t freed = 0;       // the sum of their bytes
};

// The oldest removable directories of [oldest, end) whose bytes add up to at least `need`.
// Pinned ones (and the one being written) are skipped, never taken to make the numbers
// work; if the removable ones are not enough, `freed` < `need` and the caller refuses the
// write. The store calls it first with host and device directories merged in creation
// order, then with exit directories for what is left, so exit dirs are aged for bytes last.
template <class It, class BytesOf, class IsRemovable>
BytePlan<It> PlanByteAging(It oldest, It end, uint64_t need, BytesOf bytes_of, IsRemovable removable) {
  BytePlan<It> plan;
  for (It it = oldest; it != end && plan.freed < need; ++it) {
    if (!removable(*it)) continue;
    plan.victims.push_back(it);
    plan.freed += bytes_of(*it);
  }
  return plan;
}

}  // namespace atraced
