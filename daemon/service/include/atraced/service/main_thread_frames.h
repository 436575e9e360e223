// The main thread's innermost frames in a live dump's stacks, for the hang watch's journal
// entry: the backtrace text the crash inspector writes ("Thread N (TID, NAME)" lines, each
// followed by its "#k 0x<pc> 0x<base> <module> [symbol] [at file:line]" lines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace atraced {

// The first `max` frame lines of the thread whose TID is `pid` (the main thread), as written;
// none when that thread is not in the text. Pure.
std::vector<std::string> MainThreadFrames(const std::string& backtrace, int32_t pid, size_t max);

}  // namespace atraced
