// The fake device says what it does on stderr, one line each, so a failing test's log
// shows the device's side of the story.
#pragma once

#include <cstdarg>
#include <cstdio>

namespace atraced::hal_double::device {

inline int& LogDevice() {
  static int id = 0;
  return id;
}

__attribute__((format(printf, 1, 2))) inline void Say(const char* fmt, ...) {
  char line[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  std::fprintf(stderr, "atrace_fake_device[dev %d]: %s\n", LogDevice(), line);  // one call: lines stay whole
}

}  // namespace atraced::hal_double::device
