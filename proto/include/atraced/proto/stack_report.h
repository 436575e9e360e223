// The `[stack]` section of a stackcore report (a crash, a stack dump, `atracectl dump`): its
// writer and its reader together, as the wire codecs are, so that what the daemon's unwind
// helper writes is what `atracectl info`, `hang` and `merge` read.
//
// The section is CANN's form, which asys (`asys analyze -r=stackcore`) reads:
//
//   Thread N (TID, NAME)
//   #K 0x<pc, 16 digits> 0x<module base, 16 digits> <module or ??>[ <symbol>][ at <source>]
//   (a note about this thread: "no backtrace: ...", "held stopped N us; ...", ...)
//   <a blank line: the thread's block ends>
//
// asys takes the first four tokens of a frame line (number, pc, base, module), so the module,
// the symbol and the source are written with spaces, control bytes and the backslash as
// \xNN: every field is one token, and a line from a hostile process cannot open a thread or a
// section. Lines of "(...)" outside a thread's block are notes about the whole section
// (frames of the signal handler left out, the inspector's credentials, a summary).
//
// Bounds, so that every thread of a large process is kept (a training process has hundreds)
// while the section stays bounded: a frame line is at most kMaxFrameLine bytes, a thread's
// block at most kMaxThreadBlock (the frames past it are counted, not listed), and a section at
// most kMaxStackThreads threads. kMaxStackSection bounds the whole section from these.
//
// The helper's counts travel beside the section, in a "counts" section of their own
// (StackCounts): a reader of the report text does not need them, the daemon does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace atraced::proto {

inline constexpr size_t kMaxStackThreads = 1024;
inline constexpr size_t kMaxStackFrames = 128;       // per thread
inline constexpr size_t kMaxFrameLine = 1024;        // bytes of one frame line, its newline included
inline constexpr size_t kMaxNoteLine = 512;          // bytes of one "(...)" line
inline constexpr size_t kMaxThreadNotes = 8;         // per thread
inline constexpr size_t kMaxSectionNotes = 64;
inline constexpr size_t kMaxThreadBlock = 12 << 10;  // one thread's lines, frames and notes
// The section: every thread's block, the section's notes and slack for their blank lines.
inline constexpr size_t kMaxStackSection =
    kMaxStackThreads * (kMaxThreadBlock + 1) + (kMaxSectionNotes + 2) * kMaxNoteLine;

// One frame line's fields, as the process has them (the writer escapes them, the reader
// undoes its escapes): shown to a person, they are escaped again for the terminal.
struct StackFrameText {
  uint32_t number = 0;
  uint64_t pc = 0;
  uint64_t base = 0;    // the module's load base (its mapping at file offset 0), 0 if unknown
  std::string module;   // the module's path; "" (written "??") if none
  std::string symbol;   // "function+0xoffset"; "" if unknown
  std::string source;   // "file.c:12"; "" if unknown
};

// One thread's block.
struct ThreadStack {
  uint32_t number = 0;  // "Thread N": 1 for the first listed
  int64_t tid = 0;
  std::string name;     // its comm
  std::vector<StackFrameText> frames;  // #0 (innermost) first
  size_t frames_left_out = 0;          // frames past the block's bound (written as a note)
  std::vector<std::string> notes;      // the text inside each "(...)" line of the block
  // A live dump's "(held stopped N us; it stopped M us after it was asked to)": set when this
  // thread's stack was read.
  std::optional<uint64_t> held_us;
  uint64_t asked_us = 0;
};

struct StackSection {
  std::vector<ThreadStack> threads;
  std::vector<std::string> notes;  // the text of the "(...)" lines outside any thread's block
  size_t threads_left_out = 0;     // "Thread" lines past kMaxStackThreads (a reader's bound)
};

// The helper's counts of a live dump: threads of the process, the stacks it read, the longest
// any one thread was held stopped.
struct StackCounts {
  uint32_t threads = 0;
  uint32_t read = 0;
  uint32_t max_stop_us = 0;
};

// --- Writer ---

// `text` with control bytes, DEL, the backslash and (with `spaces`) the space as \xNN.
std::string EscapeStackText(std::string_view text, bool spaces);
// EscapeStackText undone: every \xNN is its byte again.
std::string UnescapeStackText(std::string_view text);
// "Thread N (TID, NAME)\n", the name escaped (its spaces kept, as CANN writes them).
std::string ThreadLine(uint32_t number, int64_t tid, std::string_view name);
// "#K 0x... 0x... MODULE[ SYMBOL][ at SOURCE]\n", at most kMaxFrameLine bytes: a long module,
// symbol or source is cut (a symbol keeps its "+0x" offset), marked with "...".
std::string FrameLine(const StackFrameText& frame);
// "(TEXT)\n", escaped, at most kMaxNoteLine bytes.
std::string NoteLine(std::string_view text);
// A live dump's per-thread note ("held stopped N us; it stopped M us after it was asked to").
std::string HeldNote(uint64_t held_us, uint64_t asked_us);
// The thread's block: its line, its frames while the block stays within kMaxThreadBlock
// (then a note counting those left out), its notes (held_us as HeldNote, last), a blank line.
std::string ThreadBlock(const ThreadStack& thread);
// The counts section's body: "threads N\nread N\nmax-stop-us N\n".
std::string FormatStackCounts(const StackCounts& counts);

// --- Reader ---

// The text of the report's [stack] section: from the line after "[stack]" to the next line
// that starts with '[' (or the end); "" when the report has none.
std::string_view StackSectionOf(std::string_view report);
// The threads and notes of a [stack] section's text (not the whole report), within the
// bounds above: any bytes give a bounded result; lines that are none of the forms are skipped.
StackSection ReadStackSection(std::string_view section);
// FormatStackCounts' text; nullopt when it is not that.
std::optional<StackCounts> ParseStackCounts(std::string_view text);

}  // namespace atraced::proto
