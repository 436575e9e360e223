#include "common/escape.h"

#include <algorithm>
#include <cstdint>

namespace atracectl {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(unsigned char c, std::string* out) {
  *out += "\\x";
  *out += kHex[c >> 4];
  *out += kHex[c & 15];
}

void AppendU(uint32_t cp, std::string* out) {
  *out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) *out += kHex[(cp >> shift) & 15];
}

// The length of the well-formed UTF-8 sequence at `s[i]` (1..4) and its code point, or 0 when
// the bytes there are not one (stray continuation, overlong, surrogate, past U+10FFFF, cut).
size_t Utf8At(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return (*cp = c, 1);
  size_t n = 0;
  uint32_t min = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, *cp = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, *cp = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, *cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    *cp = (*cp << 6) | (b(i + k) & 0x3f);
  }
  if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff)) return 0;
  return n;
}

bool IsC1(uint32_t cp) { return cp >= 0x80 && cp <= 0x9f; }

// Unicode's invisible format controls (general category Cf) and the line and paragraph
// separators: the bidi embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069),
// the marks (U+200E, U+200F, U+061C), zero-width characters, the BOM and the tag characters.
// A terminal draws none of them, and an override (U+202E) reorders what follows it, so
// "txt.exe" can show as "exe.txt" or a frame's name hide behind another's.
bool IsFormatControl(uint32_t cp) {
  return cp == 0x00ad || cp == 0x061c || cp == 0x070f || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
         (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff ||
         (cp >= 0xfff9 && cp <= 0xfffb) || cp == 0x110bd || cp == 0x110cd || (cp >= 0x1bca0 && cp <= 0x1bca3) ||
         (cp >= 0x1d173 && cp <= 0x1d17a) || cp == 0xe0001 || (cp >= 0xe0020 && cp <= 0xe007f);
}

// "\uXXXX", or "\U00XXXXXX" past the BMP.
void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp <= 0xffff) {
    AppendU(cp, out);
    return;
  }
  *out += "\\U";
  for (int shift = 28; shift >= 0; shift -= 4) *out += kHex[(cp >> shift) & 15];
}

}  // namespace

void AppendForTerminal(std::string_view bytes, TerminalLines lines, std::string* out) {
  out->reserve(out->size() + bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if ((c == '\n' || c == '\t') && lines == TerminalLines::kKeep) {
      *out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\\') {
      *out += "\\\\";
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = Utf8At(bytes, i, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7f || IsC1(cp)) {
      for (size_t k = 0; k < (n == 0 ? 1 : n); ++k) AppendHexByte(static_cast<unsigned char>(bytes[i + k]), out);
      i += n == 0 ? 1 : n;
      continue;
    }
    if (IsFormatControl(cp)) {
      AppendCodePoint(cp, out);
      i += n;
      continue;
    }
    out->append(bytes.substr(i, n));
    i += n;
  }
}

std::string TerminalLine(std::string_view bytes) {
  std::string out;
  AppendForTerminal(bytes, TerminalLines::kEscape, &out);
  return out;
}

namespace {

// Calls `piece` with `text` in pieces of about 64 KiB, each cut before a byte that starts a
// character, so that no well-formed sequence is split (a run of more than 3 continuation bytes
// holds none to split): an escaped 64 MiB text is never held whole.
template <class Piece>
void InPieces(std::string_view text, Piece piece) {
  constexpr size_t kPiece = 64 * 1024;
  while (!text.empty()) {
    size_t cut = std::min(kPiece, text.size());
    for (size_t back = 0; cut < text.size() && back < 4 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80;
         ++back) {
      --cut;
    }
    if (cut == 0) cut = std::min(kPiece, text.size());
    piece(text.substr(0, cut));
    text.remove_prefix(cut);
  }
}

void AppendJson(std::string_view s, std::string* out) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8At(s, i, &cp);
    if (n == 0) {
      *out += "\\ufffd";  // JSON text is UTF-8: a byte that is not becomes U+FFFD
      ++i;
      continue;
    }
    switch (cp) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (cp < 0x20 || cp == 0x7f || IsC1(cp) || IsFormatControl(cp)) {
          if (cp > 0xffff) {  // as JSON's surrogate pair
            AppendU(0xd800 + ((cp - 0x10000) >> 10), out);
            AppendU(0xdc00 + ((cp - 0x10000) & 0x3ff), out);
          } else {
            AppendU(cp, out);
          }
        } else {
          out->append(s.substr(i, n));
        }
    }
    i += n;
  }
}

}  // namespace

void WriteTerminalText(std::ostream& os, std::string_view text) {
  std::string escaped;
  InPieces(text, [&](std::string_view piece) {
    escaped.clear();
    AppendForTerminal(piece, TerminalLines::kKeep, &escaped);
    os << escaped;
  });
}

std::string JsonString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  AppendJson(s, &out);
  out.push_back('"');
  return out;
}

void WriteJsonString(std::ostream& os, std::string_view s) {
  std::string escaped;
  os << '"';
  InPieces(s, [&](std::string_view piece) {
    escaped.clear();
    AppendJson(piece, &escaped);
    os << escaped;
  });
  os << '"';
}

void AppendForScriptData(std::string_view json, std::string* out) {
  out->reserve(out->size() + json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<' || c == '>' || c == '&') {
      AppendU(static_cast<unsigned char>(c), out);
    } else if (c == '\xe2' && json.substr(i + 1, 1) == "\x80" && (json.substr(i + 2, 1) == "\xa8" || json.substr(i + 2, 1) == "\xa9")) {
      AppendU(json[i + 2] == '\xa8' ? 0x2028 : 0x2029, out);
      i += 2;
    } else {
      *out += c;
    }
  }
}

}  // namespace atracectl
