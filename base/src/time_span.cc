#include "atraced/base/time_span.h"

#include <charconv>
#include <cstdint>

namespace atraced {

std::optional<std::chrono::milliseconds> ParseTimeSpan(std::string_view text) {
  const size_t digits = text.find_first_not_of("0123456789");
  if (digits == 0 || text.empty()) return std::nullopt;
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + (digits == std::string_view::npos ? text.size() : digits), n);
  if (ec != std::errc()) return std::nullopt;
  const std::string_view unit = digits == std::string_view::npos ? std::string_view() : text.substr(digits);
  uint64_t ms_per = 0;
  if (unit == "ms") ms_per = 1;
  else if (unit.empty() || unit == "s") ms_per = 1000;
  else if (unit == "min") ms_per = 60 * 1000;
  else if (unit == "h") ms_per = 3600 * 1000;
  else if (unit == "d") ms_per = 24 * 3600 * 1000;
  else return std::nullopt;
  if (n > static_cast<uint64_t>(std::chrono::milliseconds::max().count()) / ms_per) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(n * ms_per));
}

}  // namespace atraced
