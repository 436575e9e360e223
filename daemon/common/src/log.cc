#include "atraced/common/log.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>

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

std::string HumanLogPrefix(LogLevel level, int64_t when_ns) {
  static constexpr const char* kWords[] = {"emergency", "alert", "critical", "error",
                                           "warning",   "notice", "info",    "debug"};
  const time_t secs = static_cast<time_t>(when_ns / 1000000000);
  struct tm tm {};
  ::localtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%03d %s: ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>((when_ns / 1000000) % 1000),
                kWords[static_cast<int>(level) & 7]);
  return buf;
}

Logger::Sink StderrSink(bool journal) {
  return [journal](LogLevel level, std::string_view text) {
    std::string line;
    if (journal) {
      line = "<" + std::to_string(static_cast<int>(level)) + ">";
    } else {
      timespec now{};
      ::clock_gettime(CLOCK_REALTIME, &now);
      line = HumanLogPrefix(level, static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec);
    }
    line.append(text);
    line += '\n';
    // One write per line; a short write to stderr is not worth a retry loop.
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
  };
}

}  // namespace atraced
