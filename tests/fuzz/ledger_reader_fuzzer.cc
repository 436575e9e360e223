// libFuzzer target: arbitrary bytes as a saved collective ledger (hccl_tracer_ledger.bin,
// proto/ledger_reader.h), as a hostile process can make its own ledger, and as atracectl
// shows it (ledger_text.h). The reader must never crash or read outside the input, must keep
// every name within its field, account for every slot once and be deterministic; the shown
// text must hold no byte a terminal acts on. Seeds in tests/fuzz/corpus/ledger_reader: a
// ledger of three calls written by libatrace_hccl's writer, the same with a torn record, and
// a truncated copy.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "atraced/proto/ledger_reader.h"
#include "files/ledger_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  const auto snap = atraced::proto::ReadLedger(bytes);
  uint64_t last = 0;
  for (const auto& r : snap.records) {
    if (r.comm.size() > ATR_LEDGER_COMM_MAX) std::abort();
    if (r.rank_known && r.rank >= r.size) std::abort();
    if (r.completion_ns && *r.completion_ns < r.enqueue_ns) std::abort();
    if (r.index < last) std::abort();  // sorted
    last = r.index;
  }
  if (snap.records.size() + snap.empty + snap.torn + snap.invalid != (snap.header_valid ? snap.record_count : 0)) {
    std::abort();  // every slot accounted for exactly once
  }
  if (snap.problems.size() > atraced::proto::kMaxLedgerProblems) std::abort();
  if (atraced::proto::ReadLedger(bytes).records.size() != snap.records.size()) std::abort();
  for (const std::string& text : {atracectl::LedgerText(snap), atracectl::LedgerSummaryText(snap, "  ")}) {
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\n') || u == 0x7f) std::abort();
    }
  }
  size_t more = 0;
  if (atracectl::SummarizeLedger(snap, &more).size() > atracectl::kMaxCommunicators) std::abort();
  return 0;
}
