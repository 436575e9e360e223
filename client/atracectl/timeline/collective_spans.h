// Each process's collective ledger (hccl_tracer_ledger.bin, proto/ledger_reader.h) as
// timeline events, for export and merge (trace_events.h): every call a span on the track
// "comm NAME" of its process, from its enqueue to its completion ("ph":"X"), or an instant at
// its enqueue when its completion is not known (the process records enqueues only, or the
// call had not completed when the ledger was saved). Its args hold seq, op, count, dtype,
// reduce, root or peer, stream and completion.
//
// Every save of a process carries its ledger; the latest save's is drawn (it holds the
// newest calls and their completions), as hang reads it. The ledger is the process's word:
// read by the checked reader, names kept raw (the writers escape them), a time the anchors
// cannot place left out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "atraced/proto/ledger_reader.h"

namespace atracectl {

struct CollectiveCall {
  int64_t ts = 0;    // enqueue, microseconds since the epoch
  int64_t dur = -1;  // to its completion, microseconds; -1: not known
  std::string track;  // "comm NAME" (raw)
  std::string name;   // "AllReduce #4"
  std::string text;   // "#4 AllReduce 4096 fp16 sum, completed after 12 us"
  std::string args;   // JSON members: "seq":4,"op":"AllReduce","count":4096,...
};

class CollectiveCalls {
 public:
  // A ledger saved at `saved_us` of process track `pid`, kept if no later save of it was
  // seen. False with `problem` when it does not read as a ledger. `bytes` is the saved file.
  bool Add(int64_t pid, int64_t saved_us, std::span<const uint8_t> bytes, std::string* problem);
  // Each call of each process's kept ledger, by process then by its order in the ledger,
  // until `each` returns false.
  void ForEach(const std::function<bool(int64_t pid, const CollectiveCall&)>& each) const;
  // Bytes held (the kept ledgers' records): what a budget is charged.
  size_t held() const;

 private:
  struct Kept {
    int64_t saved_us = 0;
    atraced::proto::LedgerSnapshot snap;
  };
  std::map<int64_t, Kept> ledgers_;
};

// One call as drawn; false when the ledger's clock anchors cannot place it.
bool CollectiveCallOf(const atraced::proto::LedgerSnapshot& snap, const atraced::proto::LedgerRecord& r,
                      CollectiveCall* out);

}  // namespace atracectl
