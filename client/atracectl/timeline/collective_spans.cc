#include "timeline/collective_spans.h"

#include "common/escape.h"
#include "files/ledger_text.h"

namespace atracectl {

namespace proto = atraced::proto;

bool CollectiveCallOf(const proto::LedgerSnapshot& snap, const proto::LedgerRecord& r, CollectiveCall* out) {
  // Wall time = realtime anchor + (stamp - monotonic anchor); any of them may be huge.
  const __int128 wall_ns = static_cast<__int128>(snap.realtime_ns) + r.enqueue_ns - snap.monotonic_ns;
  if (wall_ns < 0 || wall_ns / 1000 > static_cast<__int128>(INT64_MAX)) return false;
  out->ts = static_cast<int64_t>(wall_ns / 1000);
  // The reader keeps a completion only at or after its enqueue.
  out->dur = r.completion_ns ? static_cast<int64_t>((*r.completion_ns - r.enqueue_ns) / 1000) : -1;
  out->track = "comm " + r.comm + (r.comm_cut ? "..." : "");
  out->name = proto::LedgerOpName(r.op) + " #" + std::to_string(r.comm_seq);
  const std::string completion = !r.completion_tracked ? "completion not tracked"
                                 : r.completion_ns     ? "completed after " + std::to_string(out->dur) + " us"
                                                       : "not completed when saved";
  out->text = DescribeCall(r) + ", " + completion;
  const bool p2p = r.op == ATR_LEDGER_OP_SEND || r.op == ATR_LEDGER_OP_RECV;
  out->args = "\"seq\":" + std::to_string(r.comm_seq) + ",\"op\":" + JsonString(proto::LedgerOpName(r.op)) +
              ",\"count\":" + std::to_string(r.count) +
              ",\"dtype\":" + (r.data_type != 255 ? JsonString(proto::HcclDataTypeName(r.data_type)) : "null") +
              ",\"reduce\":" +
              (proto::LedgerOpHasReduce(r.op) && r.reduce_op != 255 ? JsonString(proto::HcclReduceOpName(r.reduce_op))
                                                                    : "null") +
              ",\"" + (p2p ? "peer" : "root") + "\":" + (r.peer ? std::to_string(*r.peer) : "null") +
              ",\"rank\":" + (r.rank_known ? std::to_string(r.rank) : "null") +
              ",\"size\":" + (r.rank_known ? std::to_string(r.size) : "null") + ",\"stream\":" + std::to_string(r.stream) +
              ",\"completion\":" + JsonString(completion);
  return true;
}

bool CollectiveCalls::Add(int64_t pid, int64_t saved_us, std::span<const uint8_t> bytes, std::string* problem) {
  proto::LedgerSnapshot snap = proto::ReadLedger(bytes);
  if (!snap.header_valid) {
    *problem = snap.problems.empty() ? "not a collective ledger" : snap.problems.front();
    return false;
  }
  auto [it, added] = ledgers_.try_emplace(pid);
  if (added || saved_us >= it->second.saved_us) it->second = {saved_us, std::move(snap)};
  return true;
}

void CollectiveCalls::ForEach(const std::function<bool(int64_t, const CollectiveCall&)>& each) const {
  CollectiveCall call;
  for (const auto& [pid, kept] : ledgers_) {
    for (const proto::LedgerRecord& r : kept.snap.records) {
      if (CollectiveCallOf(kept.snap, r, &call) && !each(pid, call)) return;
    }
  }
}

size_t CollectiveCalls::held() const {
  size_t bytes = 0;
  for (const auto& [pid, kept] : ledgers_) bytes += kept.snap.records.size() * sizeof(proto::LedgerRecord);
  return bytes;
}

}  // namespace atracectl
