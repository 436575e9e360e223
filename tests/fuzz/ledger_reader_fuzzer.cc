// libFuzzer target: arbitrary bytes as a saved collective ledger (hccl_tracer_ledger.bin,
// proto/ledger_reader.h), as a hostile process can make its own ledger, and as atracectl
// shows it (ledger_text.h). The reader must never crash or read outside the input, must keep
// every name within its field, account for every slot once and be deterministic; the shown
// text must hold no byte a terminal acts on. The same ledger, as three ranks of a job (the
// third with its calls' counts changed), goes through hang's collectives analysis
// (fleet/collectives.h): within its bounds, and its text and JSON inert; through merge's
// spans (timeline/collective_spans.h), and each communicator through the hang journal
// entry's value and back (proto/ledger_summary.h). Seeds in tests/fuzz/corpus/ledger_reader: a
// ledger of three calls written by libatrace_hccl's writer, the same with a torn record, and
// a truncated copy.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "atraced/proto/ledger_reader.h"
#include "fleet/collectives.h"
#include "fleet/collectives_input.h"
#include "fleet/collectives_text.h"
#include "files/ledger_text.h"
#include "timeline/collective_spans.h"

namespace {

void CheckInert(const std::string& text, bool newlines) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(newlines && c == '\n')) || u == 0x7f) std::abort();
  }
}

void CheckCollectives(const atraced::proto::LedgerSnapshot& snap) {
  std::vector<atracectl::RankLedger> ranks(3);
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].rank = static_cast<int64_t>(i);
    ranks[i].ledger = snap.header_valid ? atracectl::RankLedger::Ledger::kRead : atracectl::RankLedger::Ledger::kUnreadable;
    ranks[i].comms = atracectl::CommLedgersOf(snap);
    if (ranks[i].comms.size() > atracectl::kMaxCommunicators) std::abort();
  }
  for (auto& c : ranks[2].comms) {
    ++c.last_entered.count;
    for (auto& r : c.recent) ++r.count;
  }
  const atracectl::CollectivesReport report = atracectl::AnalyzeCollectives(ranks, std::nullopt);
  if (report.comms.size() > atracectl::kMaxReportedComms) std::abort();
  for (const auto& c : report.comms) {
    if (c.mismatches.size() > atracectl::kMaxMismatches || c.classes.empty()) std::abort();
    if (c.missing.size() > ranks.size() + 1) std::abort();  // ranges between the ranks seen, whatever the size
    if (c.missing_count > c.size) std::abort();
  }
  CheckInert(atracectl::CollectivesText(report, {}), true);
  const std::string json = atracectl::CommunicatorsJson(report, {}) + atracectl::CollectivesJsonMembers(report);
  CheckInert(json, false);
  if (json.size() > (size_t{1} << 20)) std::abort();  // bounded whatever the sizes and sequence numbers claimed
}

}  // namespace

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
  CheckCollectives(snap);
  // As merge and export draw it: one event per record at most, each communicator's value for
  // the hang journal entry printable and read back as written.
  atracectl::CollectiveCalls calls;
  std::string why;
  if (calls.Add(1, 1, bytes, &why) != snap.header_valid) std::abort();
  size_t drawn = 0;
  calls.ForEach([&drawn](int64_t, const atracectl::CollectiveCall& c) {
    if (c.dur < -1) std::abort();
    ++drawn;
    return true;
  });
  if (drawn > snap.records.size()) std::abort();
  for (const auto& c : atraced::proto::LatestPerName(atraced::proto::SummarizeLedger(snap))) {
    const std::string value = atraced::proto::CommunicatorJournalValue(c, snap.completion_tracked());
    if (value.size() > atraced::proto::kCommJournalValueMax) std::abort();
    for (const char ch : value) {
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) std::abort();
    }
    const auto back = atraced::proto::ParseCommunicatorJournalValue(value);
    if (!back || back->summary.name != c.name || back->summary.last_entered.comm_seq != c.last_entered.comm_seq ||
        back->summary.last_completed != c.last_completed) {
      std::abort();
    }
  }
  return 0;
}
