#include "atraced/base/name_rule.h"

#include <cstdio>

namespace atraced {

bool IsNameChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

bool IsSafeName(std::string_view name, std::string* why) {
  auto fail = [why](std::string text) {
    if (why != nullptr) *why = std::move(text);
    return false;
  };
  if (name.empty()) return fail("empty");
  if (name == "." || name == "..") return fail("'" + std::string(name) + "' not allowed");
  for (unsigned char c : name) {
    if (IsNameChar(c)) continue;
    char text[64];
    if (c >= 0x20 && c < 0x7f) {
      std::snprintf(text, sizeof(text), "character 0x%02x '%c' not allowed", c, c);
    } else {
      std::snprintf(text, sizeof(text), "character 0x%02x not allowed", c);
    }
    return fail(text);
  }
  return true;
}

std::string SanitizeName(std::string_view text, size_t max_len, std::string_view fallback) {
  std::string out(text.substr(0, max_len));
  for (char& c : out) {
    if (!IsNameChar(static_cast<unsigned char>(c))) c = '_';
  }
  if (out.empty() || out == "." || out == "..") return std::string(fallback);
  return out;
}

}  // namespace atraced
