// A progress line on standard error for a command that reads many files (export): shown only
// when standard error is a terminal and the command has run for more than a second, redrawn
// at most ten times a second on one line, and erased when the command is done, so that a
// quick run and a run into a pipe or a file print nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>

namespace atracectl {

class Progress {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // On standard error, if it is a terminal, with the steady clock.
  explicit Progress(std::string command);
  // On `out`, shown only if `terminal`, timed by `now` (tests/client/progress_test.cc).
  Progress(std::string command, std::FILE* out, bool terminal, Clock now);
  ~Progress() { Done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` files read.
  void Files(size_t done, size_t total);
  // Erases the line, if one was shown.
  void Done();

 private:
  std::string command_;
  std::FILE* out_;
  bool terminal_ = false;
  Clock now_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace atracectl
