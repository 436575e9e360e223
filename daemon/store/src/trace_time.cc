#include "atraced/store/trace_time.h"

#include <ctime>

namespace atraced {

std::string FormatTraceTime(std::chrono::system_clock::time_point when) { return FormatTraceTime(when, std::nullopt); }

std::string FormatTraceTime(std::chrono::system_clock::time_point when, std::optional<int32_t> utc_offset_s) {
  using namespace std::chrono;
  auto us_total = duration_cast<microseconds>(when.time_since_epoch()).count();
  if (utc_offset_s) us_total += static_cast<long long>(*utc_offset_s) * 1000000;
  time_t secs = static_cast<time_t>(us_total / 1000000);
  long long frac = us_total % 1000000;
  if (frac < 0) {  // before the epoch: keep the fraction positive
    frac += 1000000;
    secs -= 1;
  }
  struct tm tm {};
  if (utc_offset_s) {
    gmtime_r(&secs, &tm);  // already shifted to the process's local time
  } else {
    localtime_r(&secs, &tm);
  }
  // Written digit by digit: this runs for every event, and snprintf was a visible part of
  // the daemon's user time per event.
  std::string out(kTraceTimeLength, '0');
  auto put = [&out](size_t pos, size_t width, long long v) {
    for (size_t i = 0; i < width; ++i, v /= 10) out[pos + width - 1 - i] = static_cast<char>('0' + v % 10);
  };
  const int year = tm.tm_year + 1900;
  put(0, 4, year < 0 ? 0 : year > 9999 ? 9999 : year);
  put(4, 2, tm.tm_mon + 1);
  put(6, 2, tm.tm_mday);
  put(8, 2, tm.tm_hour);
  put(10, 2, tm.tm_min);
  put(12, 2, tm.tm_sec);
  put(14, 3, frac / 1000);
  put(17, 3, frac % 1000);
  return out;
}

bool IsValidTraceTime(std::string_view t, std::string* why) {
  auto fail = [why](const char* reason) {
    if (why) *why = reason;
    return false;
  };
  if (t.size() != kTraceTimeLength) return fail("must be exactly 20 digits");
  for (char c : t) {
    if (c < '0' || c > '9') return fail("must be exactly 20 digits");
  }
  auto num = [&](size_t pos, size_t len) {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) v = v * 10 + (t[i] - '0');
    return v;
  };
  int year = num(0, 4), month = num(4, 2), day = num(6, 2), hour = num(8, 2), minute = num(10, 2), sec = num(12, 2);
  if (year < 1) return fail("year must be 0001-9999");
  if (month < 1 || month > 12) return fail("month must be 01-12");
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int days = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  if (day < 1 || day > days) return fail("day is not in that month (a calendar date is required)");
  if (hour > 23) return fail("hour must be 00-23");
  if (minute > 59) return fail("minute must be 00-59");
  if (sec > 60) return fail("second must be 00-60");
  return true;
}

}  // namespace atraced
