#include "daemon_talk/list_columns.h"

#include <ctime>

#include "files/dir_origin.h"
#include "common/escape.h"

namespace atracectl {

std::string HowColumn(const atrace::ListEntry& entry, const std::string& trace_dir) {
  return TerminalLine(OriginOf(entry, trace_dir + "/" + entry.path).Label());
}

std::string LocalTimeColumn(uint64_t unix_us) {
  const time_t t = static_cast<time_t>(unix_us / 1000000);
  struct tm tm {};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace atracectl
