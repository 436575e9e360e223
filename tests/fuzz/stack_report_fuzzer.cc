// The [stack] section's reader (atraced/proto/stack_report.h) on any bytes: it stays within
// its bounds, and what it read, written again, reads back as the same threads (each block
// within its bound, every frame listed or counted).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "atraced/proto/stack_report.h"

namespace proto = atraced::proto;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  proto::StackSectionOf(text);
  (void)proto::ParseStackCounts(text);
  const proto::StackSection read = proto::ReadStackSection(text);
  if (read.threads.size() > proto::kMaxStackThreads || read.notes.size() > proto::kMaxSectionNotes) std::abort();
  for (const proto::ThreadStack& t : read.threads) {
    if (t.frames.size() > proto::kMaxStackFrames || t.notes.size() > proto::kMaxThreadNotes) std::abort();
    const std::string block = proto::ThreadBlock(t);
    if (block.size() > proto::kMaxThreadBlock) std::abort();
    const proto::StackSection again = proto::ReadStackSection(block);
    if (again.threads.size() != 1) std::abort();
    const proto::ThreadStack& u = again.threads[0];
    if (u.number != t.number || u.tid != t.tid || u.held_us != t.held_us || u.name.size() > t.name.size() + 3) std::abort();
    if (u.frames.size() > t.frames.size() || u.frames.size() + u.frames_left_out != t.frames.size() + t.frames_left_out) {
      std::abort();
    }
    for (size_t i = 0; i < u.frames.size(); ++i) {
      if (u.frames[i].pc != t.frames[i].pc || u.frames[i].base != t.frames[i].base) std::abort();
    }
  }
  return 0;
}
