// The library's process-wide state: the tracer objects, the events and the daemon link.
//
// Everything but the submit path is serialised by State::mu (CANN serialises the same calls
// with its tracer lock). Submit reads only ObjectSlot::word and the slot's fixed mapping, so
// it never waits for the mutex.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "atrace_types.h"
#include "atraced/proto/codec.h"
#include "atraced/base/unique_fd.h"
#include "ring_writer.h"

namespace ascend_trace {

class DaemonLink;

inline constexpr uint32_t kMaxObjects = 100;        // CANN's MAX_OBJECT_NUM (one tracer type has objects)
inline constexpr uint32_t kMaxObjectsPerEvent = 5;  // MAX_RELATED_TRACER_NUM
inline constexpr uint32_t kMaxEventsPerObject = 64; // MAX_RELATED_EVENT_NUM
inline constexpr uint32_t kMaxEvents = 1u << 20;    // handle index width; CANN has no limit

// What submit needs, published in one atomic word so that it always sees one object's
// generation and shape together, never a mix of an old and a new object's.
//   bits 0..10 msg_size, 11..20 msg_num - 1, 21 no_lock, 22 live, 23 counter, 32..63 generation
struct ObjectWord {
  static uint64_t Pack(uint32_t generation, bool live, const RingShape& s) {
    return (static_cast<uint64_t>(generation) << 32) | (s.counter ? 1ull << 23 : 0) | (live ? 1ull << 22 : 0) |
           (s.no_lock ? 1ull << 21 : 0) |
           (static_cast<uint64_t>(s.msg_num - 1) << 11) | s.msg_size;
  }
  static uint32_t Generation(uint64_t w) { return static_cast<uint32_t>(w >> 32); }
  static bool Live(uint64_t w) { return (w >> 22) & 1; }
  static bool NoLock(uint64_t w) { return (w >> 21) & 1; }
  static bool Counter(uint64_t w) { return (w >> 23) & 1; }
  static uint64_t Mask(uint64_t w) { return (w >> 11) & 0x3ff; }
  static uint32_t MsgSize(uint64_t w) { return static_cast<uint32_t>(w & 0x7ff); }
};

struct ObjectSlot {
  std::atomic<uint64_t> word{0};  // see ObjectWord; read by submit without the mutex
  uint8_t* base = nullptr;        // ATR_RING_MAX_BYTES reserved for this slot, never unmapped
  // Guarded by State::mu.
  uint32_t generation = 1;
  bool live = false;
  pid_t pid = 0;  // creator; a forked child neither saves nor registers its parent's objects
  std::string name;
  RingShape shape;
  bool exit_save = false;
  std::vector<atraced::proto::RingStructEntry> structs;  // non-empty: a .bin object
  atraced::UniqueFd memfd;
  uint64_t mapped_bytes = 0;
  uint32_t wire_id = 0;  // the object id on the wire, unique in this process
  uint64_t registered_epoch = 0;  // the connection (DaemonLink epoch) that knows this ring
  std::vector<int64_t> events;  // bound event handles, <= kMaxEventsPerObject
};

// A destroyed exitSave object: its ring stays with the daemon (and with us, to register it
// again after a reconnect) until process exit.
struct ReleasedRing {
  std::string name;
  RingShape shape;
  std::vector<atraced::proto::RingStructEntry> structs;
  atraced::UniqueFd memfd;
  uint64_t mapped_bytes = 0;
  uint32_t wire_id = 0;
  uint64_t registered_epoch = 0;
};

// The process's collective ledger, handed over by libatrace_hccl (ledger_attach.h): registered
// on this library's connection so that every save of its rings carries it.
struct LedgerSlot {
  atraced::UniqueFd memfd;
  uint32_t records = 0;
  uint64_t bytes = 0;
  uint32_t wire_id = 0;
  pid_t pid = 0;  // who attached it; a forked child attaches its own
  uint64_t registered_epoch = 0;
  bool valid() const { return memfd.valid() && pid == ::getpid(); }
};

struct EventSlot {
  uint32_t generation = 1;
  bool live = false;
  std::string name;
  uint16_t limited_num = 0;
  uint32_t report_num = 0;
  std::vector<int64_t> objects;  // bound object handles, <= kMaxObjectsPerEvent
};

struct State {
  std::mutex mu;
  ObjectSlot objects[kMaxObjects];
  std::vector<std::unique_ptr<ReleasedRing>> released;
  std::vector<EventSlot> events;
  TraceGlobalAttr global_attr{};
  uint32_t next_wire_id = 1;
  std::unique_ptr<DaemonLink> link;
  LedgerSlot ledger;
};

// The one State, created on first use and never destroyed: the exit handler and late
// callers (other libraries' destructors) may still use it after static destructors ran.
State& GetState();

// The State if GetState has made it, else null: the submit path's way in, one acquire load
// instead of GetState's call and once-guard. A handle that passes the generation check was
// made by AtraceCreate, after the State was published, so submit never needs to make it.
extern std::atomic<State*> g_published_state;
inline State* PublishedState() { return g_published_state.load(std::memory_order_acquire); }

// Reserves the objects' address ranges (once). False if the address space is exhausted.
bool ReserveObjectRanges(State& s);

// The object a handle names, if it is live; nullptr otherwise. Caller holds s.mu.
ObjectSlot* FindObject(State& s, int64_t handle);
// The event a handle names, if it is live; nullptr otherwise. Caller holds s.mu.
EventSlot* FindEvent(State& s, int64_t handle);

// A UTC offset for the daemon's local time lines: the application's, as CANN uses it.
int32_t LocalUtcOffsetSeconds();

}  // namespace ascend_trace
