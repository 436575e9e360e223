// Structured notices of what the store did to the disk, beside the text log: the daemon
// forwards them to the journal (MESSAGE_ID plus path, pid, class, bytes fields) so log
// shippers can collect them without parsing text. Called on the store's owner thread (the event loop).
#pragma once

#include <cstdint>
#include <string>

#include "atraced/proto/codec.h"
#include "atraced/store/order_log.h"

namespace atraced {

struct StoreEvent {
  enum class Kind { kCreated, kAged } kind = Kind::kCreated;
  std::string path;   // absolute event directory path
  int32_t pid = 0;    // the pid in the event directory's name
  uint32_t uid = 0;   // the client that created it
  std::string cls;    // "host", "device" or "exit"
  uint64_t seq = 0;
  uint64_t bytes = 0; // for kAged: bytes freed, when known
  proto::Labels labels{};  // its process's job, rank and world size, each "" when not sent
  // kAged: why (AgingReasonName: count, bytes, keep-free, age, vacuum); and of a dump's
  // directory, whose dump it was and whether a bundle held it (order_log.h's 'a').
  std::string reason;
  DumpKind dump = DumpKind::kNone;
  bool exported = false;
};

class StoreEventSink {
 public:
  virtual ~StoreEventSink() = default;
  virtual void OnStoreEvent(const StoreEvent& event) = 0;
};

}  // namespace atraced
