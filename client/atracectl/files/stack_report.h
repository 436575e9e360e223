// What atracectl reads of a report's [stack] section, through the one reader of that section
// (proto/stack_report.h, beside its writer): the frames of each thread by name, for hang's
// call-path tree, and each thread as the report writes it, for info.
//
// A frame is named by its function (the symbol without its offset), else by its module's file
// name and the pc's offset in it, so that the same place in two processes of one program has
// one name. Text from a report is bounded here and escaped where printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/proto/stack_report.h"

namespace atracectl {

// One thread's frames by name, #0 (innermost) first: what the call-path tree takes.
struct ThreadFrames {
  int64_t tid = 0;
  std::vector<std::string> frames;
  std::vector<std::string> sources;  // parallel to frames: "file.c:12", "" where the frame has none
};

// "function" of "function+0x10", else "libfoo.so+0x1a2b" (the pc's offset in its module); at
// most 256 bytes.
std::string FrameName(const atraced::proto::StackFrameText& frame);

// The threads of the report's [stack] section by frame name (none when it has no section),
// within proto's bounds (its reader's: 1024 threads, 128 frames a thread) and at most
// `max_bytes` held in all; *cut is set when a thread or a frame was left out for `max_bytes`.
std::vector<ThreadFrames> FrameNamesOf(std::string_view report, size_t max_bytes = SIZE_MAX, bool* cut = nullptr);

// The bytes FrameNamesOf counts against max_bytes for `threads`.
size_t HeldBytes(const std::vector<ThreadFrames>& threads);

// One thread as the report's writer writes it: its "Thread N (TID, NAME)" line, its frame
// lines and its "(...)" notes (frames past the block's bound, the time it was held stopped).
struct ThreadLines {
  std::string header;
  std::vector<std::string> frames, notes;
};

// Every thread of the report's [stack] section, at most `max_frames` frame lines each.
std::vector<ThreadLines> ThreadLinesOf(std::string_view report, size_t max_frames);

}  // namespace atracectl
