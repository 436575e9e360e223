// The stacks of a report's [stack] section (a crash, a stack dump, an `atracectl dump`: the
// lines daemon/crash/stack_format.h writes and asys reads)
//
//   Thread 1 (TID, NAME)
//   #0 0x<pc> 0x<base> <module>[ <symbol>+0x<off>][ at <source>]
//
// A frame is named by its function (the symbol without its offset), else by its module's
// file name and the pc's offset in it, so that the same place in two processes of one
// program has one name. Text from a report is bounded here and escaped where printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace atracectl {

struct ThreadStack {
  long tid = 0;
  std::string name;
  std::vector<std::string> frames;  // #0 (innermost) first, by name (ParseStackSection)
  // As written (ParseStackLines, for info): the "Thread N (TID, NAME)" line, the frame lines
  // and the notes ("(no backtrace: ...)", "(held stopped N us)").
  std::string header;
  std::vector<std::string> lines, notes;
};

// The threads of the report's [stack] section; empty when it has none. At most 4096 threads
// of 256 frames of 256 bytes each are kept, and at most `max_bytes` of frame text in all
// (*cut set when a thread or frame was left out for either).
std::vector<ThreadStack> ParseStackSection(std::string_view report, size_t max_bytes = SIZE_MAX, bool* cut = nullptr);

// The threads of the [stack] section as written, for a reader who shows them: every thread,
// each with at most `max_frames` frame lines; a line over `max_line` bytes is cut and ends
// "...(cut)". Names (frames) are left empty.
std::vector<ThreadStack> ParseStackLines(std::string_view report, size_t max_frames, size_t max_line);

}  // namespace atracectl
