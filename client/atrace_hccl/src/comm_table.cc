#include "comm_table.h"

#include <cstring>

namespace atrace_hccl {

namespace {

uint32_t Hash(uintptr_t key) {
  uint64_t x = key;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

}  // namespace

void CommTable::Fill(CommEntry& e, HcclComm comm, const CommQueries& q) {
  char name[ATRACE_HCCL_COMM_NAME_MAX + 1] = {};
  if (q.get_name == nullptr || q.get_name(comm, name) != ATRACE_HCCL_SUCCESS) name[0] = '\0';
  e.name_len = static_cast<uint16_t>(::strnlen(name, ATRACE_HCCL_COMM_NAME_MAX));
  std::memcpy(e.name, name, e.name_len);
  uint32_t rank = 0, size = 0;
  e.rank_known = q.get_rank != nullptr && q.get_size != nullptr && q.get_rank(comm, &rank) == ATRACE_HCCL_SUCCESS &&
                 q.get_size(comm, &size) == ATRACE_HCCL_SUCCESS && size != 0 && rank < size;
  e.rank = e.rank_known ? rank : 0;
  e.size = e.rank_known ? size : 0;
}

CommEntry* CommTable::Find(HcclComm comm, const CommQueries& q) {
  const auto key = reinterpret_cast<uintptr_t>(comm);
  if (key == 0) return nullptr;
  for (uint32_t i = 0, at = Hash(key); i < kEntries; ++i, ++at) {
    CommEntry& e = entries_[at & (kEntries - 1)];
    uintptr_t seen = e.key.load(std::memory_order_acquire);
    if (seen == 0 && !e.key.compare_exchange_strong(seen, key, std::memory_order_acq_rel)) {
      if (seen != key) continue;  // another communicator took it first
    } else if (seen != 0 && seen != key) {
      continue;
    }
    // Ours. Filled once by one caller; others of its first call wait for that one query.
    for (;;) {
      uint32_t state = e.ready.load(std::memory_order_acquire);
      if (state == kReady) return &e;
      if (state == kNeedsFill && e.ready.compare_exchange_weak(state, kFilling, std::memory_order_acquire)) {
        Fill(e, comm, q);
        e.ready.store(kReady, std::memory_order_release);
        return &e;
      }
    }
  }
  return nullptr;
}

void CommTable::Forget(HcclComm comm) {
  const auto key = reinterpret_cast<uintptr_t>(comm);
  for (uint32_t i = 0, at = Hash(key); i < kEntries; ++i, ++at) {
    CommEntry& e = entries_[at & (kEntries - 1)];
    const uintptr_t seen = e.key.load(std::memory_order_acquire);
    if (seen == 0) return;
    if (seen != key) continue;
    // The entry stays claimed (probing must not stop at a hole): it is filled again and
    // counts from 1. A call racing with its own communicator's destroy is the caller's bug.
    e.next_seq.store(0, std::memory_order_relaxed);
    e.ready.store(kNeedsFill, std::memory_order_release);
    return;
  }
}

void CommTable::Clear() {
  for (CommEntry& e : entries_) {
    e.key.store(0, std::memory_order_relaxed);
    e.ready.store(kNeedsFill, std::memory_order_relaxed);
    e.next_seq.store(0, std::memory_order_relaxed);
  }
}

}  // namespace atrace_hccl
