// The record number: how many schedule/stackcore event directories of each class (host,
// device) the whole root keeps. Range [10, 1000], default 10, as CANN's
// ASCEND_TRACE_RECORD_NUM.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "atraced/common/log.h"

namespace atraced {

inline constexpr uint32_t kRecordNumMin = 10;
inline constexpr uint32_t kRecordNumMax = 1000;
inline constexpr uint32_t kRecordNumDefault = 10;

// Strict parse of a decimal integer in [10, 1000]: digits only, no sign, no spaces.
std::optional<uint32_t> ParseRecordNum(std::string_view text);

// The environment variable keeps CANN's soft behaviour and its exact log lines, which
// operators grep for: unset -> default (info), valid -> value (info), anything else ->
// warning and the fallback. `env_value` is getenv("ASCEND_TRACE_RECORD_NUM") or null.
// `configured` is a value from the configuration file, which the environment overrides;
// without one the fallback is the default 10 and the lines are CANN's, byte for byte.
uint32_t RecordNumFromEnv(const char* env_value, std::optional<uint32_t> configured, Logger& log);

}  // namespace atraced
