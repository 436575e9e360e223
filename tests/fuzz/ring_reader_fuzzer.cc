// libFuzzer target: arbitrary bytes as a ring snapshot (proto/ring_reader.h), as a hostile
// application could leave its memfd. The reader must never crash or read outside the input,
// must keep every record inside its slot and within msg_size, and must be deterministic.
// Seeds in tests/fuzz/corpus/ring_reader: a small ring, a wrapped one with a torn slot, and a
// truncated copy, written field by field after ring_layout.h; and cann_golden.bin, a CANN
// .bin atraced wrote (tests/proto/data), for the .bin decoder the same bytes go through; and
// positions.txt, a ring save's .txt ending with its positions line (proto/ring_positions.h),
// which the same bytes go through as well.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "atraced/proto/cann_bin_text.h"
#include "atraced/proto/ring_layout.h"
#include "atraced/proto/ring_positions.h"
#include "atraced/proto/ring_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  // The same bytes as a CANN .bin that `atracectl show` decodes (a file anyone may have put
  // in a trace dir): never a crash, and the same answer twice.
  const auto as_bin = atraced::proto::CannBinToText(bytes, 0);
  if (as_bin.ok && !as_bin.error.empty()) std::abort();
  if (atraced::proto::CannBinToText(bytes, 0).text != as_bin.text) std::abort();
  // A viewer's bound stops the text at a whole line: what it gives is where the full text starts.
  const auto bounded = atraced::proto::CannBinToText(bytes, 0, 256);
  if (bounded.ok && (bounded.text.size() > 256 || (!bounded.text.empty() && bounded.text.back() != '\n'))) std::abort();
  if (as_bin.ok && (!bounded.ok || as_bin.text.compare(0, bounded.text.size(), bounded.text) != 0)) std::abort();
  // The positions line a save ends with: bounded by what a ring holds, and written again it
  // reads back the same.
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  if (const auto at = atraced::proto::FindRingPositions(file)) {
    if (at->records.empty() || at->records.size() > ATR_RING_MAX_MSG_NUM) std::abort();
    const auto again = atraced::proto::FindRingPositions(atraced::proto::FormatRingPositions(at->ring, at->records));
    if (!again || again->ring != at->ring || again->records != at->records) std::abort();
  }
  const auto snap = atraced::proto::ReadRingSnapshot(bytes);
  uint64_t last = 0;
  for (const auto& r : snap.records) {
    if (r.data.data() < data || r.data.data() + r.data.size() > data + size) std::abort();
    if (r.data.size() > snap.msg_size) std::abort();
    if (r.timestamp_ns < last) std::abort();  // sorted
    last = r.timestamp_ns;
  }
  if (snap.records.size() + snap.empty + snap.torn + snap.invalid != (snap.header_valid ? snap.msg_num : 0)) {
    std::abort();  // every slot accounted for exactly once
  }
  if (snap.problems.size() > atraced::proto::kMaxRingProblems) std::abort();
  // With the header as it is, an expectation that matches must not change the verdict.
  if (snap.header_valid) {
    const auto again = atraced::proto::ReadRingSnapshot(
        bytes, atraced::proto::RingExpectation{snap.msg_num, snap.msg_size, snap.flags});
    if (again.records.size() != snap.records.size()) std::abort();
  }
  return 0;
}
