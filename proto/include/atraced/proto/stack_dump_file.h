// The .bin of CANN's on-demand stack dump as atraced writes it:
// stackcore_event_{pid}_{t20}/stackcore_tracer_{signo}_{pid}_{prog}_{t20}.bin.
//
// CANN's asys waits for that file (`asys collect -r=stacktrace`) and hands it to
// AtraceStackcoreParse of the libascend_trace it loads, which writes the .txt beside it. The
// format is ours, since our AtraceStackcoreParse is what reads it (CANN's own .bin is raw
// stack memory that its parser unwinds; we unwind in the daemon and keep the result):
//
//   offset  size  field
//   0       8     magic "ATRSTK\0\1" (format version 1 in the last byte)
//   8       4     text length N, little-endian, at most kMaxStackDumpText
//   12      4     reserved, 0
//   16      N     the stack report: the stackcore .txt, UTF-8, with CANN's [process],
//                 [stack] and [maps] sections (docs/ASCEND_TRACE.md)
//
// Nothing follows the text. A file that is anything else is refused with the reason.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace atraced::proto {

inline constexpr char kStackDumpMagic[8] = {'A', 'T', 'R', 'S', 'T', 'K', '\0', '\1'};
inline constexpr size_t kStackDumpHeaderSize = 16;
inline constexpr uint32_t kMaxStackDumpText = 16u << 20;

std::vector<uint8_t> EncodeStackDumpFile(const std::string& text);

// The text of a stack-dump file; false with `why` set when `bytes` is not one.
bool DecodeStackDumpFile(std::span<const uint8_t> bytes, std::string* text, std::string* why);

}  // namespace atraced::proto
