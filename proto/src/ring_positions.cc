#include "atraced/proto/ring_positions.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "atraced/proto/ring_layout.h"

namespace atraced::proto {
namespace {

constexpr std::string_view kPrefix = "atraced: ring ";
constexpr std::string_view kFrom = " from ";
constexpr std::string_view kRecords = " records ";
constexpr size_t kRingDigits = 16;

bool Number(std::string_view text, uint64_t* v) {
  if (text.empty() || text.size() > 20) return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *v);
  return ec == std::errc() && p == text.data() + text.size();
}

}  // namespace

std::string FormatRingPositions(uint64_t ring, std::span<const uint64_t> records) {
  if (records.empty()) return "";
  const uint64_t from = *std::min_element(records.begin(), records.end());
  for (const uint64_t k : records) {
    if (k - from >= ATR_RING_MAX_MSG_NUM) return "";  // not one ring's window: said by no line
  }
  char id[kRingDigits + 1];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(ring));
  std::string out(kPrefix);
  out.append(id).append(kFrom).append(std::to_string(from)).append(kRecords);
  for (size_t i = 0; i < records.size();) {
    size_t j = i;
    while (j + 1 < records.size() && records[j + 1] == records[j] + 1) ++j;
    if (i) out += ',';
    out += std::to_string(records[i] - from);
    if (j > i) out.append("-").append(std::to_string(records[j] - from));
    i = j + 1;
  }
  out += '\n';
  return out;
}

size_t MaxRingPositionsLine(size_t records) {
  // prefix, ring, " from ", 20 digits, " records ", newline; per record 4 digits and a separator.
  return kPrefix.size() + kRingDigits + kFrom.size() + 20 + kRecords.size() + 1 + 5 * records;
}

std::optional<RingPositions> FindRingPositions(std::string_view file) {
  if (file.empty() || file.back() != '\n') return std::nullopt;
  file.remove_suffix(1);
  // From the last "atraced: ring " to the end, one line: after a .txt's last line, or right
  // after a .bin's data segment, whose last byte is a record's and may be anything.
  const std::string_view tail = file.substr(file.size() - std::min(file.size(), kMaxRingPositionsLine));
  const size_t start = tail.rfind(kPrefix);
  if (start == std::string_view::npos) return std::nullopt;
  const std::string_view line = tail.substr(start);
  if (line.find('\n') != std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(kPrefix.size());
  if (rest.size() < kRingDigits + kFrom.size() || rest.substr(kRingDigits, kFrom.size()) != kFrom) return std::nullopt;
  RingPositions out;
  const std::string_view id = rest.substr(0, kRingDigits);
  for (const char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), out.ring, 16);
  if (ec != std::errc() || p != id.data() + id.size()) return std::nullopt;
  rest.remove_prefix(kRingDigits + kFrom.size());
  const size_t records_at = rest.find(kRecords);
  uint64_t from = 0;
  if (records_at == std::string_view::npos || !Number(rest.substr(0, records_at), &from)) return std::nullopt;
  rest.remove_prefix(records_at + kRecords.size());
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view run = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    if (comma != std::string_view::npos && rest.empty()) return std::nullopt;  // a trailing comma
    const size_t dash = run.find('-');
    uint64_t first = 0, last = 0;
    if (!Number(run.substr(0, dash), &first)) return std::nullopt;
    last = first;
    if (dash != std::string_view::npos && (!Number(run.substr(dash + 1), &last) || last <= first)) return std::nullopt;
    // Offsets within one ring's window, and no more positions than a ring holds.
    if (last >= ATR_RING_MAX_MSG_NUM || from > UINT64_MAX - last ||
        last - first >= ATR_RING_MAX_MSG_NUM - out.records.size()) {
      return std::nullopt;
    }
    for (uint64_t k = first;; ++k) {
      out.records.push_back(from + k);
      if (k == last) break;
    }
  }
  if (out.records.empty()) return std::nullopt;
  return out;
}

}  // namespace atraced::proto
