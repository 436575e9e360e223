// atracectl's one way of showing bytes from trace files (client/atracectl/common/escape.h), for a
// terminal, in JSON and inside the HTML timeline's script block.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "common/escape.h"

using atracectl::AppendForScriptData;
using atracectl::AppendForTerminal;
using atracectl::JsonString;
using atracectl::TerminalLine;
using atracectl::TerminalLines;
using atracectl::WriteJsonString;
using atracectl::WriteTerminalText;

namespace {

std::string Terminal(std::string_view bytes) {
  std::string out;
  AppendForTerminal(bytes, TerminalLines::kKeep, &out);
  return out;
}

bool ValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// No byte a terminal acts on: C0 (but newline and tab where kept), DEL, C1 as a byte (valid
// UTF-8 has no stray 0x80..0x9f) or as UTF-8 (U+0080..U+009F is 0xc2 0x80..0x9f).
bool Inert(const std::string& s, bool lines_kept) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (lines_kept && (c == '\n' || c == '\t')) continue;
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return false;
  }
  return ValidUtf8(s);
}

std::string Hex(unsigned c) {
  static const char kHex[] = "0123456789abcdef";
  return std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
}

}  // namespace

TEST_CASE("terminal: every C0 byte and DEL is shown as a hex escape, newline and tab only where lines are kept",
          "[atracectl][escape]") {
  for (unsigned c = 0; c < 0x20; ++c) {
    INFO(c);
    const std::string byte(1, static_cast<char>(c));
    CHECK(TerminalLine("a" + byte + "b") == "a" + Hex(c) + "b");
    if (c == '\n' || c == '\t') {
      CHECK(Terminal("a" + byte + "b") == "a" + byte + "b");
    } else {
      CHECK(Terminal("a" + byte + "b") == "a" + Hex(c) + "b");
    }
  }
  CHECK(TerminalLine("\x7f") == "\\x7f");
  CHECK(Terminal("\x7f") == "\\x7f");
}

TEST_CASE("terminal: every C1 control, as a byte or as UTF-8, is shown as a hex escape", "[atracectl][escape]") {
  for (unsigned c = 0x80; c <= 0x9f; ++c) {
    INFO(c);
    CHECK(Terminal(std::string(1, static_cast<char>(c))) == Hex(c));            // 8-bit C1 (CSI is 0x9b)
    CHECK(Terminal(std::string("\xc2") + static_cast<char>(c)) == "\\xc2" + Hex(c));  // U+0080..U+009F
  }
  CHECK(Terminal("\xc2\xa0") == "\xc2\xa0");  // U+00A0 is text
}

TEST_CASE("terminal: escape sequences an attacker writes are inert and visible", "[atracectl][escape]") {
  const std::string osc52 = "\x1b]52;c;cm0gLXJmIH4=\x07";
  CHECK(Terminal(osc52) == "\\x1b]52;c;cm0gLXJmIH4=\\x07");
  CHECK(Terminal("\x1b[2J\x1b[H") == "\\x1b[2J\\x1b[H");                          // clear-screen
  CHECK(Terminal("\x1b]0;pwned\x1b\\") == "\\x1b]0;pwned\\x1b\\\\");              // title, ST
  CHECK(Terminal("\x1b]2;pwned\x07") == "\\x1b]2;pwned\\x07");
  CHECK(Terminal("ok\r\x1b[Kroot@host:~# ") == "ok\\x0d\\x1b[Kroot@host:~# ");  // fake prompt
  CHECK(Terminal("\x9b" "2J") == "\\x9b2J");                                      // 8-bit CSI
  CHECK(Terminal("\xc2\x9d" "0;t\xc2\x9c") == "\\xc2\\x9d0;t\\xc2\\x9c");         // OSC, ST as UTF-8
  for (const std::string& s : {osc52, std::string("\x1b[2J"), std::string("\x9b\x9d\xc2\x9b")}) {
    CHECK(Inert(Terminal(s), true));
    CHECK(Inert(TerminalLine(s), false));
  }
}

TEST_CASE("terminal: UTF-8 text is kept, invalid UTF-8 is shown byte by byte", "[atracectl][escape]") {
  CHECK(Terminal("naïve 日本 😀") == "naïve 日本 😀");
  CHECK(Terminal("\xff") == "\\xff");
  CHECK(Terminal("\xc0\xaf") == "\\xc0\\xaf");              // overlong '/'
  CHECK(Terminal("\xe0\x80\x9b") == "\\xe0\\x80\\x9b");      // overlong CSI
  CHECK(Terminal("\xed\xa0\x80") == "\\xed\\xa0\\x80");      // a surrogate
  CHECK(Terminal("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(Terminal("\xe6\x97") == "\\xe6\\x97");              // cut short
  CHECK(Terminal("a\\x1b") == "a\\\\x1b");                   // a backslash is not an escape
}

TEST_CASE("terminal and JSON: bidi overrides, isolates, marks and other invisible format controls are escaped",
          "[atracectl][escape][security]") {
  // "rank 3 \u202e3 knar" would show as "rank 3 rank 3": the override reorders what follows it.
  CHECK(Terminal("rank 3 \xe2\x80\xaeknar 3") == "rank 3 \\u202eknar 3");
  CHECK(TerminalLine("a\xe2\x80\xae" "b") == "a\\u202eb");
  // Every bidi control (embeddings, overrides, isolates, marks), zero-width ones, the
  // separators, the BOM, a tag character; each escaped in both forms, nothing else changed.
  const std::pair<const char*, const char*> cases[] = {
      {"\xe2\x80\xaa", "202a"}, {"\xe2\x80\xab", "202b"}, {"\xe2\x80\xac", "202c"}, {"\xe2\x80\xad", "202d"},
      {"\xe2\x80\xae", "202e"}, {"\xe2\x81\xa6", "2066"}, {"\xe2\x81\xa7", "2067"}, {"\xe2\x81\xa8", "2068"},
      {"\xe2\x81\xa9", "2069"}, {"\xe2\x80\x8e", "200e"}, {"\xe2\x80\x8f", "200f"}, {"\xd8\x9c", "061c"},
      {"\xe2\x80\x8b", "200b"}, {"\xe2\x80\x8d", "200d"}, {"\xe2\x80\xa8", "2028"}, {"\xe2\x80\xa9", "2029"},
      {"\xef\xbb\xbf", "feff"}, {"\xc2\xad", "00ad"}};
  for (const auto& [utf8, hex] : cases) {
    INFO(hex);
    CHECK(Terminal(std::string("x") + utf8 + "y") == std::string("x\\u") + hex + "y");
    CHECK(JsonString(std::string("x") + utf8 + "y") == std::string("\"x\\u") + hex + "y\"");
  }
  CHECK(Terminal("\xf3\xa0\x80\x81") == "\\U000e0001");               // LANGUAGE TAG
  CHECK(JsonString("\xf3\xa0\x80\x81") == "\"\\udb40\\udc01\"");  // as a surrogate pair
  // Letters of right-to-left scripts are text, not controls: kept.
  CHECK(Terminal("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xd8\xb3\xd9\x84\xd8\xa7\xd9\x85") ==
        "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xd8\xb3\xd9\x84\xd8\xa7\xd9\x85");
}

TEST_CASE("terminal: a long text written in pieces is what one piece would be", "[atracectl][escape]") {
  std::string text;
  for (int i = 0; i < 30000; ++i) text += "日本\x1b\xff\n";
  std::ostringstream os;
  WriteTerminalText(os, text);
  CHECK(os.str() == Terminal(text));
  CHECK(Inert(os.str(), true));
}

TEST_CASE("JSON: controls, C1, U+2028/2029 as u-escapes, invalid UTF-8 as U+FFFD, the rest as it is",
          "[atracectl][escape]") {
  CHECK(JsonString("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(JsonString("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
  CHECK(JsonString(std::string("\0\x1b\x7f", 3)) == "\"\\u0000\\u001b\\u007f\"");
  CHECK(JsonString("\xc2\x9b") == "\"\\u009b\"");
  CHECK(JsonString("\xe2\x80\xa8\xe2\x80\xa9") == "\"\\u2028\\u2029\"");
  CHECK(JsonString("\x9b\xff") == "\"\\ufffd\\ufffd\"");
  CHECK(JsonString("日本 <b>&") == "\"日本 <b>&\"");
  for (unsigned c = 0; c < 256; ++c) {
    const std::string j = JsonString(std::string(1, static_cast<char>(c)) + "\xc2" + static_cast<char>(c));
    INFO(c);
    CHECK(ValidUtf8(j));
    CHECK(Inert(j, false));
  }
  std::string big;
  for (int i = 0; i < 30000; ++i) big += "日\x1b\xff\"";
  std::ostringstream os;
  WriteJsonString(os, big);
  CHECK(os.str() == JsonString(big));
}

TEST_CASE("HTML script data: nothing that can change a <script> block's parse is left", "[atracectl][escape]") {
  const std::string json = JsonString("<!--<script>a && b > c</script>\xe2\x80\xa8\xe2\x80\xa9");
  std::string safe;
  AppendForScriptData(json, &safe);
  CHECK(safe ==
        "\"\\u003c!--\\u003cscript\\u003ea \\u0026\\u0026 b \\u003e c\\u003c/script\\u003e\\u2028\\u2029\"");
  for (char c : {'<', '>', '&'}) CHECK(safe.find(c) == std::string::npos);
  // What JSON.parse reads back is the same: the \u escapes stand for what they replaced.
  std::string raw_sep;
  AppendForScriptData("\"\xe2\x80\xa8\"", &raw_sep);
  CHECK(raw_sep == "\"\\u2028\"");
  std::string backslash;
  AppendForScriptData(JsonString("\\<"), &backslash);
  CHECK(backslash == "\"\\\\\\u003c\"");
}
