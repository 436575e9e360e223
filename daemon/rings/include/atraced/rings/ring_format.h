// CANN's file formats for a tracer object's ring, as pure functions of a validated snapshot
// (proto/ring_reader.h), the object's struct entries and the application's UTC offset.
// The daemon writes what they return into schedule_tracer_{object}.txt or .bin.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/proto/ring_reader.h"
#include "atraced/rings/ring_timeline.h"

namespace atraced::core {

// CANN's .bin constants (tracer_mgr_operate_inner.h).
inline constexpr uint32_t kCannBinMagic = 0xD928;
inline constexpr uint32_t kCannBinVersion = 3;
// Our .bin "cycles" are nanoseconds since the anchor whatever the ring stamped with (the
// timeline converts counter ticks): a 1 GHz cycle counter, in CANN's kHz.
inline constexpr uint64_t kCannBinCpuFreqKhz = 1000000;

// CANN's line prefix for a local time in ns: "YYYY-MM-DD hh:mm:ss.mmm.uuu " (with the space).
std::string FormatLineTime(int64_t local_ns);

// .txt: one line per record, oldest first, "<time> <text>\n"; the text stops at its first NUL
// and at msg_size - 1 bytes (CANN's rules), and a newline is added unless it ends with one.
// If records were dropped, torn or invalid, one trailer line says how many. Empty when there
// is nothing to write (CANN creates no file then).
// `time` places the records (ring_timeline.h: RingTimeline::Of the same snapshot).
std::string FormatRingText(const proto::RingSnapshot& snap, const RingTimeline& time, int32_t utc_offset_s);

// .bin: CANN's TraceCtrlHead (48 bytes), struct segment (40 + per entry 40 + 40 per field),
// TraceStructDataHead (16) and one (16 + msg_size)-byte slot per record, oldest first.
// Empty when there are no records. Drops are not representable here; the daemon logs them.
std::vector<uint8_t> FormatRingBinary(const proto::RingSnapshot& snap, const RingTimeline& time,
                                      const std::vector<proto::RingStructEntry>& structs, int32_t utc_offset_s);

// The trailer line FormatRingText appends, or "" when nothing was lost.
std::string LostRecordsLine(const proto::RingSnapshot& snap);

// The line a save appends to either form, after everything above: each record's position in
// the ring, in the files' order (proto/ring_positions.h); "" when there are no records.
std::string RingPositionsLine(const proto::RingSnapshot& snap, const RingTimeline& time);

}  // namespace atraced::core
