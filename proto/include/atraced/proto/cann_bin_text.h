// CANN's trace .bin (the schedule_tracer_{object}.bin of an object with struct entries) as
// the text CANN's asys writes for it: `asys` turns each .bin into a .txt of one line per
// record, "YYYY-MM-DD hh:mm:ss.mmm.uuu <struct name>: <field>[<value>], ..." (hicann/oam-tools,
// src/asys/collect/trace/trace_collect.py). `atracectl show` prints the same text, so that a
// reader gets what asys would give, byte for byte, without asys.
//
// Restated from asys's rules, in our own code, including the ones that look accidental,
// since its output is the reference:
//   - the control head: magic 0xD928, version 2 or 3, trace type 0; minutesWest read as
//     unsigned; version 3 adds cpuFreq (kHz);
//   - a record's time is (realTime + cycle / cpuFreq * 1e6 + (the reader's UTC offset in
//     minutes now - minutesWest) * 1e9) / 1e9 seconds in double arithmetic, then the
//     reader's local time at microseconds, rounded half to even (Python's fromtimestamp);
//   - busy slots and slots whose struct type has no entry are skipped; a field reads
//     elements while its length and the record's length both allow, a scalar one element;
//     a field longer than what is left of either is an error for the whole file;
//   - DEC and CHAR show modes print the value, BIN as Python's bin(), HEX as hex(); char
//     arrays concatenate, other arrays join with ", "; NUL bytes are dropped from the text.
// Any malformed or truncated input is refused with the reason (asys writes nothing then).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace atraced::proto {

// asys's text of one file is refused past this size.
inline constexpr size_t kCannBinMaxText = 64u << 20;

struct CannBinText {
  bool ok = false;
  bool stopped = false; // ok, but the text reached the reader's max_text: whole lines, the rest not read
  std::string text;     // when ok: what asys writes
  std::string error;    // when not ok: why
  std::string warning;  // asys's warning for a file whose data segment is short, or ""
};

// `reader_utc_offset_s`: the UTC offset of the reader's local time now (asys: time.localtime
// against time.gmtime); times are printed in the reader's local time (localtime_r).
// `max_text`: a reader's bound on the text, for a viewer that sums what it holds over many
// files (a small .bin may decode to ~1000 times its size). Below kCannBinMaxText, the text
// stops before the line that would pass it (`stopped`: the text is at most max_text bytes, of
// whole lines); at it, such a file is refused.
CannBinText CannBinToText(std::span<const uint8_t> bytes, int32_t reader_utc_offset_s,
                          size_t max_text = kCannBinMaxText);

}  // namespace atraced::proto
