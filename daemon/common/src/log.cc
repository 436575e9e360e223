#include "atraced/common/log.h"

#include <unistd.h>

namespace atraced {

std::string EscapeControl(std::string text) {
  auto needs = [](unsigned char c) { return c < 0x20 || c == 0x7f || c == '\\'; };
  size_t first = 0;
  while (first < text.size() && !needs(static_cast<unsigned char>(text[first]))) ++first;
  if (first == text.size()) return text;  // the common case: nothing to escape, no copy
  std::string out = text.substr(0, first);
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = first; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!needs(c)) {
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  struct Named {
    std::string_view name;
    LogLevel level;
  };
  static constexpr Named kLevels[] = {{"error", LogLevel::kError},
                                      {"warning", LogLevel::kWarning},
                                      {"notice", LogLevel::kNotice},
                                      {"info", LogLevel::kInfo},
                                      {"debug", LogLevel::kDebug}};
  for (const auto& l : kLevels) {
    if (l.name == text) {
      *level = l.level;
      return true;
    }
  }
  return false;
}

Logger::Sink StderrSink() {
  return [](LogLevel level, std::string_view text) {
    std::string line = "<" + std::to_string(static_cast<int>(level)) + ">";
    line.append(text);
    line += '\n';
    // One write per line; a short write to stderr is not worth a retry loop.
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
  };
}

}  // namespace atraced
