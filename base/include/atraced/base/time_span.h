// A time span as journald writes them, shared by the daemon's configuration keys and the
// labels a process sends (ATRACE_HANG_TIMEOUT): one syntax wherever a span is read.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace atraced {

// An integer with an optional unit, ms, s, min, h or d (none: seconds); "0" is zero.
// nullopt for anything else or an overflow.
std::optional<std::chrono::milliseconds> ParseTimeSpan(std::string_view text);

}  // namespace atraced
