#include "common/progress.h"

#include <unistd.h>

#include <cstdio>

namespace atracectl {

Progress::Progress(std::string command)
    : Progress(std::move(command), stderr, ::isatty(STDERR_FILENO) == 1, [] { return std::chrono::steady_clock::now(); }) {}

Progress::Progress(std::string command, std::FILE* out, bool terminal, Clock now)
    : command_(std::move(command)), out_(out), terminal_(terminal), now_(std::move(now)), start_(now_()) {}

void Progress::Files(size_t done, size_t total) {
  if (!terminal_) return;
  const auto now = now_();
  if (now - start_ < std::chrono::seconds(1) || (shown_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  shown_ = true;
  const unsigned percent = total ? static_cast<unsigned>(done * 100 / total) : 100;
  std::fprintf(out_, "\ratracectl: %s: read %zu of %zu files (%u%%)\x1b[K", command_.c_str(), done, total, percent);
  std::fflush(out_);
}

void Progress::Done() {
  if (!shown_) return;
  shown_ = false;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
}

}  // namespace atracectl
