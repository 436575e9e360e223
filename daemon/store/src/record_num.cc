#include "atraced/store/record_num.h"

#include <charconv>

namespace atraced {

std::optional<uint32_t> ParseRecordNum(std::string_view text) {
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  uint32_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;  // overflow
  if (value < kRecordNumMin || value > kRecordNumMax) return std::nullopt;
  return value;
}

uint32_t RecordNumFromEnv(const char* env_value, std::optional<uint32_t> configured, Logger& log) {
  const uint32_t fallback = configured.value_or(kRecordNumDefault);
  if (env_value == nullptr) {
    if (configured) {
      log.Info("set dir num=", *configured, " by configuration file.");
    } else {
      log.Info("doesn't set env ASCEND_TRACE_RECORD_NUM, use default dir num=", kRecordNumDefault, ".");
    }
    return fallback;
  }
  if (auto value = ParseRecordNum(env_value)) {
    log.Info("set dir num=", *value, " by env ASCEND_TRACE_RECORD_NUM.");
    return *value;
  }
  log.Warning("invalid value [", env_value, "] for ASCEND_TRACE_RECORD_NUM, expected range: [",
              kRecordNumMin, ", ", kRecordNumMax, "]. Use default dir num=", fallback, ".");
  return fallback;
}

}  // namespace atraced
