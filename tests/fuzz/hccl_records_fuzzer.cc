// libFuzzer target: arbitrary bytes as the records of a process's HCCL rings (one record per
// line, as hang reads them from a saved .txt or a decoded .bin), which the process writes
// itself: HCCL's own atrace records (fleet/hccl_records.h), read when a rank has no ledger.
// The reader must never crash, keep every name within ATR_LEDGER_COMM_MAX, hold at most
// kMaxCommunicators communicators of at most kRecentCalls calls each, and be deterministic;
// its communicators, as three ranks of a job (the third with its counts changed), go through
// hang's collectives analysis, whose text and JSON must be inert and bounded. Seeds in
// tests/fuzz/corpus/hccl_records: hcomm's entry and success records cut in 111-byte pieces,
// Send/Recv/Broadcast entries, and records that do not read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "atraced/proto/ledger_summary.h"
#include "fleet/collectives.h"
#include "fleet/collectives_input.h"
#include "fleet/collectives_text.h"
#include "fleet/hccl_records.h"

namespace {

void CheckInert(const std::string& text, bool newlines) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(newlines && c == '\n')) || u == 0x7f) std::abort();
  }
}

atracectl::HcclRecords Read(std::string_view text) {
  atracectl::HcclRecords h;
  h.BeginRing();
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    h.Piece(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  h.EndRing();
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)atracectl::IsHcclObject(text);
  const atracectl::HcclRecordRead one = atracectl::ReadHcclRecord(text);
  if (one.kind == atracectl::HcclRecordKind::kEntry && one.call.comm.size() > ATR_LEDGER_COMM_MAX) std::abort();

  const atracectl::HcclRecords h = Read(text);
  const std::vector<atracectl::CommLedger> comms = h.Comms();
  if (comms.size() > atraced::proto::kMaxCommunicators || comms.empty() == h.any()) std::abort();
  for (const auto& c : comms) {
    if (c.name.empty() || c.name.size() > ATR_LEDGER_COMM_MAX || c.recent.empty() ||
        c.recent.size() > atracectl::kRecentCalls || !c.from_hccl_records || c.rank_known) {
      std::abort();
    }
  }
  const atracectl::HcclRecords again = Read(text);
  if (again.entries() != h.entries() || again.skipped() != h.skipped() || again.Comms().size() != comms.size()) {
    std::abort();
  }

  std::vector<atracectl::RankLedger> ranks(3);
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].rank = static_cast<int64_t>(i);
    ranks[i].ledger = h.any() ? atracectl::RankLedger::Ledger::kRead : atracectl::RankLedger::Ledger::kNone;
    ranks[i].from_hccl_records = h.any();
    ranks[i].hccl_records_skipped = h.skipped();
    ranks[i].comms = comms;
  }
  for (auto& c : ranks[2].comms) {
    ++c.last_entered.count;
    for (auto& r : c.recent) ++r.count;
  }
  const atracectl::CollectivesReport report = atracectl::AnalyzeCollectives(ranks, std::nullopt);
  for (const auto& c : report.comms) {
    if (c.mismatches.size() > atracectl::kMaxMismatches || c.classes.empty()) std::abort();
  }
  CheckInert(atracectl::CollectivesText(report, {}), true);
  const std::string json = atracectl::CommunicatorsJson(report, {}) + atracectl::CollectivesJsonMembers(report);
  CheckInert(json, false);
  if (json.size() > (size_t{1} << 20)) std::abort();
  return 0;
}
