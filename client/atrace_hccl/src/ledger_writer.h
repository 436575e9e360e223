// The writer side of the collective ledger (atraced/proto/ledger_layout.h): a sealed memfd
// mapped shared, records claimed with one atomic add. Append takes no lock, allocates
// nothing and makes no system call: it is what a collective pays (bench/hccl_ledger_bench).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "atraced/proto/ledger_layout.h"

namespace atrace_hccl {

// One call's fields, as the interposer knows them before it calls HCCL.
struct CallRecord {
  uint16_t op = 0;
  uint64_t comm_seq = 0;
  uint64_t count = 0;
  uint64_t stream = 0;
  uint32_t rank = 0;
  uint32_t size = 0;
  uint32_t peer = ATR_LEDGER_NO_PEER;
  uint8_t data_type = 255;
  uint8_t reduce_op = 255;
  uint8_t flags = 0;  // ATR_LEDGER_REC_NO_RANK, ATR_LEDGER_REC_COMPLETION; NAME_CUT is set by Append
  std::string_view comm;
};

class LedgerWriter {
 public:
  // Makes the memfd (sealed against shrinking and growing) and maps it; false with errno set.
  bool Create(uint32_t records);
  // Unmaps and closes (the daemon's mapping keeps the memory while it holds the ledger).
  void Close();
  ~LedgerWriter() { Close(); }

  int memfd() const { return memfd_; }
  uint32_t records() const { return records_; }
  uint64_t bytes() const { return ATR_LEDGER_BYTES(records_); }

  // Writes one record; returns its sequence (k + 1), which Complete takes.
  uint64_t Append(const CallRecord& call, uint64_t enqueue_ns, uint32_t tid);
  // Stores the completion of record `seq` unless its slot was reused meanwhile (the reader
  // then sees the pair belong to another record and ignores it). One thread calls it.
  void Complete(uint64_t seq, uint64_t completion_ns);
  // Says in the header that completion is tracked (an acl runtime was found).
  void MarkCompletionTracked();

  // The mapping, for tests.
  const uint8_t* data() const { return base_; }

 private:
  atr_ledger_record* Slot(uint64_t k) const {
    return reinterpret_cast<atr_ledger_record*>(base_ + ATR_LEDGER_HEADER_SIZE) + (k & (records_ - 1));
  }
  atr_ledger_header* Header() const { return reinterpret_cast<atr_ledger_header*>(base_); }

  int memfd_ = -1;
  uint8_t* base_ = nullptr;
  uint32_t records_ = 0;
};

// CLOCK_MONOTONIC in ns (the vDSO: no system call).
uint64_t MonotonicNs();
// The calling thread's id, asked of the kernel once per thread.
uint32_t ThreadId();

}  // namespace atrace_hccl
