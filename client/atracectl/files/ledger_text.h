// A process's collective ledger (hccl_tracer_ledger.bin, proto/ledger_reader.h) as atracectl
// shows it: every record as a line (show), and per communicator the last call entered and the
// last completed (info, and whatever groups ranks by sequence number). Names are the process's
// own bytes: escaped here, one value per line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "atraced/proto/ledger_reader.h"
#include "atraced/proto/ledger_summary.h"

namespace atracectl {

// The ledger's lines: a head line (records, whether completion is tracked, what was torn or
// invalid), then one line per record, oldest first, escaped for a terminal.
std::string LedgerText(const atraced::proto::LedgerSnapshot& snap);

// One call, as a line shows it: "#1042 AllReduce 4096 fp16 sum" (root or peer when it has one).
std::string DescribeCall(const atraced::proto::LedgerRecord& r);

// Per communicator: proto/ledger_summary.h, shared with the daemon's hang journal entry.
using atraced::proto::CommunicatorSummary;
using atraced::proto::kMaxCommunicators;
using atraced::proto::SummarizeLedger;

// One line per communicator, each starting with `indent`: its name, this rank, the last call
// entered and the last completed ("comm hccl_world_group rank 5/8: entered #1042 AllReduce
// 4096 fp16 sum, completed #1041"); a head line says when completion is not tracked.
std::string LedgerSummaryText(const atraced::proto::LedgerSnapshot& snap, const std::string& indent);
// The same as one JSON object: {"seq", "completion_tracked", "torn", "invalid", "communicators":
// [{"name", "rank", "size" (null when unknown), "calls", "last_entered": {"seq", "op", "count",
// "dtype", "reduce", "peer"}, "last_completed" (null when none)}]}; `seq` is the directory's.
std::string LedgerSummaryJson(const atraced::proto::LedgerSnapshot& snap, uint64_t seq);

}  // namespace atracectl
