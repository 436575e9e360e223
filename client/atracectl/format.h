// Output helpers for atracectl: JSON written by hand (no JSON library dependency), and the
// human-readable units. Kept apart from the commands so the formats are in one place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace atracectl {

// A JSON string literal, quotes included: escapes '"', '\\' and control characters.
std::string JsonString(std::string_view s);

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

}  // namespace atracectl
