#include "atraced/service/main_thread_frames.h"

#include <string_view>

namespace atraced {

std::vector<std::string> MainThreadFrames(const std::string& backtrace, int32_t pid, size_t max) {
  std::vector<std::string> frames;
  const std::string main_thread = " (" + std::to_string(pid) + ", ";
  bool in_main = false;
  std::string_view rest(backtrace);
  while (!rest.empty() && frames.size() < max) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.rfind("Thread ", 0) == 0) {
      if (in_main) break;  // the main thread's frames ended
      const size_t open = line.find(" (");
      in_main = open != std::string_view::npos && line.substr(open, main_thread.size()) == main_thread;
    } else if (in_main && line.rfind('#', 0) == 0) {
      frames.emplace_back(line);
    }
  }
  return frames;
}

}  // namespace atraced
