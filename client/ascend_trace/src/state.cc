#include "state.h"

#include <sys/mman.h>
#include <time.h>

#include "alt_stack.h"
#include "daemon_link.h"
#include "handles.h"

namespace ascend_trace {

State& GetState() {
  EnsureThreadAltStack();  // every API call passes here, submit included
  // Leaked on purpose: the exit handler runs after static destructors may have started.
  static State* state = [] {
    auto* s = new State;
    s->link = std::make_unique<DaemonLink>();
    g_published_state.store(s, std::memory_order_release);
    return s;
  }();
  return *state;
}

std::atomic<State*> g_published_state{nullptr};

bool ReserveObjectRanges(State& s) {
  if (s.objects[0].base != nullptr) return true;
  // One range per slot, reserved for the life of the process and never unmapped: destroy
  // maps scratch memory over a ring instead, so a submit racing it writes harmlessly into
  // the scratch, never into unmapped or reused memory.
  const size_t total = static_cast<size_t>(ATR_RING_MAX_BYTES) * kMaxObjects;
  void* p = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  for (uint32_t i = 0; i < kMaxObjects; ++i) {
    s.objects[i].base = static_cast<uint8_t*>(p) + static_cast<size_t>(i) * ATR_RING_MAX_BYTES;
  }
  return true;
}

ObjectSlot* FindObject(State& s, int64_t handle) {
  uint32_t index, generation;
  if (!SplitHandle(handle, HandleKind::kObject, &index, &generation) || index >= kMaxObjects) return nullptr;
  ObjectSlot& o = s.objects[index];
  return (o.live && o.generation == generation) ? &o : nullptr;
}

EventSlot* FindEvent(State& s, int64_t handle) {
  uint32_t index, generation;
  if (!SplitHandle(handle, HandleKind::kEvent, &index, &generation) || index >= s.events.size()) return nullptr;
  EventSlot& e = s.events[index];
  return (e.live && e.generation == generation) ? &e : nullptr;
}

int32_t LocalUtcOffsetSeconds() {
  const time_t now = ::time(nullptr);
  struct tm local {};
  if (::localtime_r(&now, &local) == nullptr) return 0;
  return static_cast<int32_t>(local.tm_gmtoff);
}

}  // namespace ascend_trace
