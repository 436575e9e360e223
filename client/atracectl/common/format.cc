#include "common/format.h"

#include <cstdio>
#include <ctime>

#include "atraced/atrace_client.h"

namespace atracectl {

std::string_view KindName(int kind) {
  switch (kind) {
    case ATRACE_EVENT_SCHEDULE: return "schedule";
    case ATRACE_EVENT_STACKCORE: return "stackcore";
    case ATRACE_EVENT_EXIT: return "exit";
    default: return "unknown";
  }
}

std::string_view ClassName(int kind, int side) {
  if (kind == ATRACE_EVENT_EXIT) return "exit";
  return side == ATRACE_SIDE_DEVICE ? "device" : "host";
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < sizeof kUnits / sizeof kUnits[0]) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string HumanAge(uint64_t seconds) {
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string UtcTime(int64_t us) {
  const time_t s = static_cast<time_t>(us / 1000000);
  struct tm tm {};
  ::gmtime_r(&s, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06lld UTC", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1000000));
  return buf;
}

}  // namespace atracectl
