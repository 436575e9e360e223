// Where each record of a ring save sits in its ring: the line the daemon ends every ring
// save with (schedule_tracer_{object}.txt and .bin), so that a reader of several saves of one
// ring (a report, then a later dump) can tell the same record from a different one by its
// identity, not by its text or time:
//
//   atraced: ring 0000001234abcdef from 4000 records 0-93,95-99\n
//
//   - `ring`: 16 hex digits, the ring's own identity within its process: the CLOCK_MONOTONIC
//     anchor its header got when the ring was made (ring_layout.h's monotonic_ns), the same
//     at every save of that ring and different for a ring made again under the same name;
//     the process is the save's process directory (its pid and start time);
//   - `from`: the smallest position of the save's records in the ring's sequence
//     (ring_layout.h's k: the k-th write, from 0);
//   - `records`: each record's position less `from` (0..1023: a save holds one ring's window
//     of at most 1024 records), in the file's order (one per record line of the .txt, one per
//     record of the .bin's data segment), as runs of consecutive offsets "a-b" or single ones
//     "a", comma-separated. A position is absent only where its record is (torn, invalid,
//     overwritten).
//
// In a .txt it is the last line, after the record lines and the lost-records line; a line
// without CANN's time stamp, which CANN's readers and atracectl's skip. In a .bin it follows
// the data segment directly (no newline before it), which CANN's readers (asys) end at the
// data head's record count. So a reader takes the file's last "atraced: ring " to its end,
// which must be one line ending the file. A file
// without it (written before, or by a client through FILE_APPEND) has no positions; a reader
// then places records as it did (atracectl: ring_windows.h).
//
// The parser reads that line from anywhere, as hostile: anything malformed, more than
// ATR_RING_MAX_MSG_NUM positions or a line longer than kMaxRingPositionsLine is no positions. A process can write any file of its own, so positions are attributed only to the
// process whose directory holds the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace atraced::proto {

inline constexpr size_t kMaxRingPositionsLine = 64 * 1024;

struct RingPositions {
  uint64_t ring = 0;
  std::vector<uint64_t> records;  // in the file's order
};

// The line (with its newline) for `records` (positions in the file's order) of ring `ring`;
// "" when there are none, or they span more than one ring's window (no valid ring does).
std::string FormatRingPositions(uint64_t ring, std::span<const uint64_t> records);
// The longest line FormatRingPositions makes for `records` records (what a save reserves).
size_t MaxRingPositionsLine(size_t records);

// The positions line that ends `file` (a .txt or a .bin), or nullopt.
std::optional<RingPositions> FindRingPositions(std::string_view file);

}  // namespace atraced::proto
