// A Logger whose lines are kept for assertions.
#pragma once

#include <string>
#include <vector>

#include "atraced/common/log.h"

namespace atraced::testing {

struct LogLine {
  LogLevel level;
  std::string text;
};

class CaptureLog {
 public:
  CaptureLog() : logger_([this](LogLevel l, std::string_view t) { lines_.push_back({l, std::string(t)}); }, LogLevel::kDebug) {}
  Logger& logger() { return logger_; }
  const std::vector<LogLine>& lines() const { return lines_; }
  // True if some line at `level` contains `needle`.
  bool Has(LogLevel level, const std::string& needle) const {
    for (const auto& l : lines_) {
      if (l.level == level && l.text.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  // Lines at `level` that contain `needle`.
  size_t Count(LogLevel level, const std::string& needle) const {
    size_t n = 0;
    for (const auto& l : lines_) n += l.level == level && l.text.find(needle) != std::string::npos;
    return n;
  }
  bool HasExact(LogLevel level, const std::string& text) const {
    for (const auto& l : lines_) {
      if (l.level == level && l.text == text) return true;
    }
    return false;
  }
  void clear() { lines_.clear(); }

 private:
  std::vector<LogLine> lines_;
  Logger logger_;
};

}  // namespace atraced::testing
