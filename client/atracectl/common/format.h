// Output helpers for atracectl: the names of kinds and classes, and the human-readable units.
// JSON is written by hand (no JSON library dependency); its strings come from escape.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/escape.h"  // JsonString: every command writes JSON

namespace atracectl {

// "schedule", "stackcore", "exit" (or "unknown").
std::string_view KindName(int kind);
// The aging class of an event directory: "host", "device", or "exit" (exit dirs are
// aged against their own bound, exit-record-num, whatever their side, so they form their
// own class).
std::string_view ClassName(int kind, int side);

// 1536 -> "1.5 KiB"; below 1 KiB, "N B".
std::string HumanBytes(uint64_t bytes);
// Seconds as "42s", "5m", "3h", "2d".
std::string HumanAge(uint64_t seconds);
// Microseconds since the epoch as "2026-12-07 03:50:00.000000 UTC".
std::string UtcTime(int64_t us);

}  // namespace atracectl
