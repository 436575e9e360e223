#include "atraced/core/log.h"

#include <unistd.h>

namespace atraced {

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
