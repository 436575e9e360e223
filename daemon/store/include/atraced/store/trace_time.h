// CANN's 20-digit time string: local time YYYYMMDDhhmmss, then milliseconds (3) and
// microseconds (3), e.g. 20260522143015123456. Used in process, event and stackcore names.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace atraced {

inline constexpr size_t kTraceTimeLength = 20;

std::string FormatTraceTime(std::chrono::system_clock::time_point when);
// The same in the local time of a process whose clock reads `utc_offset_s` ahead of UTC (CANN
// names a process's directories in its own local time); nullopt: the daemon's local time.
std::string FormatTraceTime(std::chrono::system_clock::time_point when, std::optional<int32_t> utc_offset_s);

// True if `text` is 20 digits forming a plausible calendar time (month 01-12, day 01-31,
// hour < 24, minute < 60, second < 61). `why` says what is wrong otherwise.
bool IsValidTraceTime(std::string_view text, std::string* why = nullptr);

}  // namespace atraced
