// The retention settings beyond the count limits: the byte budget, the keep-free reserve, the
// aging policy and the maximum age (journald's SystemMaxUse, SystemKeepFree and MaxRetentionSec;
// systemd-coredump's per-owner fairness). The store applies them (trace_store.h); the
// arithmetic is pure and lives in byte_budget.h and aging.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "atraced/store/aging.h"
#include "atraced/store/byte_budget.h"

namespace atraced {

struct RetentionSettings {
  std::optional<SizeSpec> max_use;    // nullopt: 10% of the root's file system, at most 4 GiB
  std::optional<SizeSpec> keep_free;  // nullopt: 15% of the root's file system, at most 4 GiB
  AgingPolicy policy = AgingPolicy::kFifo;
  std::chrono::seconds max_age{0};    // 0: off
  bool operator==(const RetentionSettings&) const = default;
};

// The settings in bytes, resolved against the file system the root is on.
struct ByteLimits {
  uint64_t max_use = 0;
  uint64_t keep_free = 0;
  uint64_t fs_total = 0;  // the file system's size when resolved
};

inline ByteLimits ResolveByteLimits(const RetentionSettings& s, uint64_t fs_total) {
  return ByteLimits{s.max_use ? ResolveSize(*s.max_use, fs_total) : DefaultMaxUse(fs_total),
                    s.keep_free ? ResolveSize(*s.keep_free, fs_total) : DefaultKeepFree(fs_total), fs_total};
}

}  // namespace atraced
