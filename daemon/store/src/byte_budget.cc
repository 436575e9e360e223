#include "atraced/store/byte_budget.h"

#include <charconv>
#include <limits>

namespace atraced {

const char* ByteLimitName(ByteLimit limit) {
  switch (limit) {
    case ByteLimit::kNone: return "none";
    case ByteLimit::kMaxUse: return "max-use";
    case ByteLimit::kKeepFree: return "keep-free";
  }
  return "?";
}

std::optional<SizeSpec> ParseSizeSpec(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int shift = 0;
  bool percent = false;
  switch (text.back()) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case '%': percent = true; break;
    default: break;
  }
  if (shift != 0 || percent) text.remove_suffix(1);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  if (percent) {
    if (n > 100) return std::nullopt;
    return SizeSpec{n, true};
  }
  if (shift != 0 && n > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return SizeSpec{n << shift, false};
}

uint64_t ResolveSize(const SizeSpec& spec, uint64_t fs_bytes) {
  if (!spec.percent) return spec.value;
  // fs_bytes / 100 * pct loses under 100 bytes and cannot overflow.
  return fs_bytes / 100 * spec.value + fs_bytes % 100 * spec.value / 100;
}

ByteNeed BytesToFree(uint64_t used, uint64_t incoming, uint64_t max_use, uint64_t fs_free, uint64_t keep_free) {
  const uint64_t after = used > std::numeric_limits<uint64_t>::max() - incoming ? std::numeric_limits<uint64_t>::max()
                                                                                 : used + incoming;
  const uint64_t over_use = after > max_use ? after - max_use : 0;
  // Free space after the write must stay >= keep_free: fs_free - incoming >= keep_free.
  const uint64_t wanted_free = keep_free > std::numeric_limits<uint64_t>::max() - incoming
                                   ? std::numeric_limits<uint64_t>::max()
                                   : keep_free + incoming;
  const uint64_t under_free = wanted_free > fs_free ? wanted_free - fs_free : 0;
  if (over_use == 0 && under_free == 0) return {};
  if (over_use >= under_free) return {over_use, ByteLimit::kMaxUse};
  return {under_free, ByteLimit::kKeepFree};
}

}  // namespace atraced
