// The name rule shared by decoders and the daemon. A name becomes part of a file name
// under the spool root, so it must not be able to leave its directory ('/', ".."), name a
// directory itself ("."), or carry bytes that shells, logs or other filesystems mangle
// (NUL, control characters, non-ASCII). An allow-list rather than a deny-list keeps that
// true for bytes nobody thought of.
#include <cstdio>
#include <string>
#include <string_view>

#include "atraced/proto/codec.h"

namespace atraced::proto {
namespace {

bool IsNameChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}

}  // namespace

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

}  // namespace atraced::proto
