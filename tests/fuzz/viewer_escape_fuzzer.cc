// libFuzzer target: arbitrary bytes as a trace file's text, through atracectl's escaping
// (client/atracectl/common/escape.h), the one way the viewer shows them. For a terminal the result
// is well-formed UTF-8 with no control but newline and tab (and not those for one value);
// JSON strings are well-formed UTF-8 with no raw control; script data holds no '<', '>', '&'.
// Pieces written in bounded chunks are what one call gives.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "common/escape.h"

namespace {

bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    if (cp >= 0x80 && cp <= 0x9f) return false;  // C1 as UTF-8
    i += n;
  }
  return true;
}

bool NoControls(std::string_view s, bool lines_kept) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (lines_kept && (c == '\n' || c == '\t')) continue;
    if (c < 0x20 || c == 0x7f) return false;
  }
  return ValidUtf8(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string text;
  atracectl::AppendForTerminal(bytes, atracectl::TerminalLines::kKeep, &text);
  if (!NoControls(text, true)) std::abort();
  if (!NoControls(atracectl::TerminalLine(bytes), false)) std::abort();
  std::ostringstream pieces;
  atracectl::WriteTerminalText(pieces, bytes);
  if (pieces.str() != text) std::abort();
  const std::string json = atracectl::JsonString(bytes);
  if (!NoControls(json, false) || json.size() < 2 || json.front() != '"' || json.back() != '"') std::abort();
  std::ostringstream json_pieces;
  atracectl::WriteJsonString(json_pieces, bytes);
  if (json_pieces.str() != json) std::abort();
  std::string script;
  atracectl::AppendForScriptData(json, &script);
  if (script.find_first_of("<>&") != std::string::npos || script.find("\xe2\x80\xa8") != std::string::npos) {
    std::abort();
  }
  return 0;
}
