// A progress line on standard error for a command that reads many files (export): shown only
// when standard error is a terminal and the command has run for more than a second, redrawn
// at most ten times a second on one line, and erased when the command is done, so that a
// quick run and a run into a pipe or a file print nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace atracectl {

class Progress {
 public:
  explicit Progress(std::string command);
  ~Progress() { Done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` files read.
  void Files(size_t done, size_t total);
  // Erases the line, if one was shown.
  void Done();

 private:
  std::string command_;
  bool terminal_ = false;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace atracectl
