#include "files/ledger_text.h"

#include <time.h>

#include <cstdint>
#include <cstdio>

#include "common/escape.h"

namespace atracectl {

namespace proto = atraced::proto;

namespace {

// Local wall time of a record's monotonic time, through the ledger's clock anchors.
std::string WallTime(const proto::LedgerSnapshot& snap, uint64_t monotonic_ns) {
  // The anchors and stamps are the process's word: any of them may be huge.
  const __int128 wide = static_cast<__int128>(snap.realtime_ns) + monotonic_ns - snap.monotonic_ns;
  if (wide < 0 || wide > static_cast<__int128>(INT64_MAX)) return "(time unknown)";
  const auto ns = static_cast<int64_t>(wide);
  const time_t secs = static_cast<time_t>(ns / 1000000000);
  struct tm local {};
  if (::localtime_r(&secs, &local) == nullptr || local.tm_year > 9000) return "(time unknown)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06lld", local.tm_year + 1900, local.tm_mon + 1,
                local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, static_cast<long long>(ns % 1000000000 / 1000));
  return buf;
}

std::string Completion(const proto::LedgerRecord& r) {
  if (!r.completion_tracked) return "completion not tracked";
  if (!r.completion_ns) return "not completed";
  return "completed after " + std::to_string((*r.completion_ns - r.enqueue_ns) / 1000) + " us";
}

}  // namespace

std::string DescribeCall(const proto::LedgerRecord& r) {
  std::string s = "#" + std::to_string(r.comm_seq) + " " + proto::LedgerOpName(r.op);
  if (r.op != ATR_LEDGER_OP_BARRIER) s += " " + std::to_string(r.count);
  if (r.data_type != 255) s += " " + proto::HcclDataTypeName(r.data_type);
  if (proto::LedgerOpHasReduce(r.op) && r.reduce_op != 255) s += " " + proto::HcclReduceOpName(r.reduce_op);
  if (r.peer) {
    const bool p2p = r.op == ATR_LEDGER_OP_SEND || r.op == ATR_LEDGER_OP_RECV;
    s += (p2p ? " peer " : " root ") + std::to_string(*r.peer);
  }
  return s;
}

std::string LedgerText(const proto::LedgerSnapshot& snap) {
  if (!snap.header_valid) {
    return "collective ledger: unreadable: " + TerminalLine(snap.problems.empty() ? "" : snap.problems.front()) + "\n";
  }
  std::string out = "collective ledger: " + std::to_string(snap.records.size()) + " call(s) of " +
                    std::to_string(snap.write_index) + " made; " +
                    (snap.completion_tracked() ? "completion tracked (acl events)"
                                               : "enqueue times only (no acl runtime in the process)");
  if (snap.torn != 0 || snap.invalid != 0) {
    out += "; " + std::to_string(snap.torn) + " torn, " + std::to_string(snap.invalid) + " invalid";
  }
  out += "\n";
  for (const proto::LedgerRecord& r : snap.records) {
    out += WallTime(snap, r.enqueue_ns) + " comm " + TerminalLine(r.comm) + (r.comm_cut ? "...(cut)" : "");
    out += r.rank_known ? " rank " + std::to_string(r.rank) + "/" + std::to_string(r.size) : " rank ?";
    char stream[32];
    std::snprintf(stream, sizeof stream, "%#llx", static_cast<unsigned long long>(r.stream));
    out += " " + DescribeCall(r) + " stream " + stream + " tid " + std::to_string(r.tid) + " " + Completion(r) + "\n";
  }
  return out;
}

std::string LedgerSummaryText(const proto::LedgerSnapshot& snap, const std::string& indent) {
  if (!snap.header_valid) {
    return indent + "unreadable: " + TerminalLine(snap.problems.empty() ? "" : snap.problems.front()) + "\n";
  }
  std::string out;
  if (!snap.completion_tracked()) out += indent + "(enqueue times only: no acl runtime in the process)\n";
  size_t more = 0;
  for (const CommunicatorSummary& c : SummarizeLedger(snap, &more)) {
    out += indent + "comm " + TerminalLine(c.name) + (c.last_entered.comm_cut ? "...(cut)" : "") +
           (c.rank_known ? " rank " + std::to_string(c.rank) + "/" + std::to_string(c.size) : " rank ?") +
           ": entered " + DescribeCall(c.last_entered);
    if (snap.completion_tracked()) {
      out += c.last_completed ? ", completed #" + std::to_string(*c.last_completed) : ", none completed";
    }
    out += " (" + std::to_string(c.calls) + " call(s) in the ledger)\n";
  }
  if (more != 0) out += indent + "(" + std::to_string(more) + " call(s) of further communicators not shown)\n";
  if (snap.records.empty()) out += indent + "(no complete record)\n";
  if (snap.torn != 0 || snap.invalid != 0) {
    out += indent + "(" + std::to_string(snap.torn) + " torn, " + std::to_string(snap.invalid) + " invalid record(s))\n";
  }
  return out;
}

std::string LedgerSummaryJson(const proto::LedgerSnapshot& snap, uint64_t seq) {
  std::string out = "{\"seq\":" + std::to_string(seq) + ",\"readable\":" + (snap.header_valid ? "true" : "false") +
                    ",\"completion_tracked\":" + (snap.completion_tracked() ? "true" : "false") +
                    ",\"torn\":" + std::to_string(snap.torn) + ",\"invalid\":" + std::to_string(snap.invalid) +
                    ",\"communicators\":[";
  bool first = true;
  for (const CommunicatorSummary& c : SummarizeLedger(snap)) {
    const proto::LedgerRecord& r = c.last_entered;
    out += std::string(first ? "" : ",") + "{\"name\":" + JsonString(c.name) +
           ",\"rank\":" + (c.rank_known ? std::to_string(c.rank) : "null") +
           ",\"size\":" + (c.rank_known ? std::to_string(c.size) : "null") + ",\"calls\":" + std::to_string(c.calls) +
           ",\"last_entered\":{\"seq\":" + std::to_string(r.comm_seq) + ",\"op\":" + JsonString(proto::LedgerOpName(r.op)) +
           ",\"count\":" + std::to_string(r.count) +
           ",\"dtype\":" + (r.data_type != 255 ? JsonString(proto::HcclDataTypeName(r.data_type)) : "null") +
           ",\"reduce\":" +
           (proto::LedgerOpHasReduce(r.op) && r.reduce_op != 255 ? JsonString(proto::HcclReduceOpName(r.reduce_op)) : "null") +
           ",\"peer\":" + (r.peer ? std::to_string(*r.peer) : "null") + "},\"last_completed\":" +
           (c.last_completed ? std::to_string(*c.last_completed) : "null") + "}";
    first = false;
  }
  return out + "]}";
}

}  // namespace atracectl
