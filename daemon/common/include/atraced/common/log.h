// Logging. Lines go to a sink with an sd-daemon priority; the daemon's sink writes
// "<N>text\n" to stderr when it is the journal, so journald keeps the priority, and a time
// and a level word otherwise. Tests capture lines instead.
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <string_view>

namespace atraced {

enum class LogLevel { kError = 3, kWarning = 4, kNotice = 5, kInfo = 6, kDebug = 7 };

// Control characters (below 0x20, and 0x7f) as \n, \t or \xNN, and backslash as \\, so
// text from outside (the environment, a configuration value, a path) can neither split a
// log line nor forge one. Every line a Logger emits goes through it.
std::string EscapeControl(std::string text);

// Parses "error", "warning", "notice", "info", "debug". Returns false on anything else.
bool ParseLogLevel(std::string_view text, LogLevel* level);

class Logger {
 public:
  using Sink = std::function<void(LogLevel, std::string_view)>;

  explicit Logger(Sink sink, LogLevel max_level = LogLevel::kInfo)
      : sink_(std::move(sink)), max_level_(max_level) {}

  void set_max_level(LogLevel level) { max_level_ = level; }
  bool enabled(LogLevel level) const { return static_cast<int>(level) <= static_cast<int>(max_level_); }

  template <class... Args>
  void Log(LogLevel level, const Args&... args) {
    if (!enabled(level)) return;
    std::ostringstream out;
    (out << ... << args);
    sink_(level, EscapeControl(out.str()));
  }
  template <class... Args> void Error(const Args&... a) { Log(LogLevel::kError, a...); }
  template <class... Args> void Warning(const Args&... a) { Log(LogLevel::kWarning, a...); }
  template <class... Args> void Notice(const Args&... a) { Log(LogLevel::kNotice, a...); }
  template <class... Args> void Info(const Args&... a) { Log(LogLevel::kInfo, a...); }
  template <class... Args> void Debug(const Args&... a) { Log(LogLevel::kDebug, a...); }

 private:
  Sink sink_;
  LogLevel max_level_;
};

// Writes one line per message to stderr with a single write(2), so lines from threads never
// mix. `journal` (stderr is journald's stream, JOURNAL_STREAM): "<N>message", the priority
// journald keeps. Otherwise, for a person at a terminal or reading a file: local time to the
// millisecond and the level word, "2026-12-03 08:15:01.123 notice: message".
Logger::Sink StderrSink(bool journal);

// "2026-12-03 08:15:01.123 notice: " for `when` (ns since the epoch), in local time.
std::string HumanLogPrefix(LogLevel level, int64_t when_ns);

}  // namespace atraced
