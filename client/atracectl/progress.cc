#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace atracectl {

Progress::Progress(std::string command)
    : command_(std::move(command)), terminal_(::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}

void Progress::Files(size_t done, size_t total) {
  if (!terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || (shown_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  shown_ = true;
  const unsigned percent = total ? static_cast<unsigned>(done * 100 / total) : 100;
  std::fprintf(stderr, "\ratracectl: %s: read %zu of %zu files (%u%%)\x1b[K", command_.c_str(), done, total, percent);
  std::fflush(stderr);
}

void Progress::Done() {
  if (!shown_) return;
  shown_ = false;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
}

}  // namespace atracectl
