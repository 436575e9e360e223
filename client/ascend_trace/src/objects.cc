// Tracer objects: create, look up, submit, destroy (CANN's tracer_core.c and
// tracer_mgr_operate.c, with handles that are checked rather than dereferenced).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "atrace_pub.h"
#include "atraced/base/name_rule.h"
#include "atraced/proto/codec.h"
#include "alt_stack.h"
#include "daemon_link.h"
#include "handles.h"
#include "ring_clock.h"
#include "state.h"
#include "struct_list.h"
#include "tracer_type.h"

using namespace ascend_trace;

namespace {

// CANN: names are shorter than 32 bytes. Ours also become file names through the daemon,
// which accepts only [A-Za-z0-9_.-]: refuse others here rather than lose every save later.
bool ValidObjectName(const char* name) {
  if (name == nullptr) return false;
  const size_t len = ::strnlen(name, TRACE_NAME_LENGTH);
  if (len >= TRACE_NAME_LENGTH) return false;
  return atraced::IsSafeName(std::string_view(name, len), nullptr);
}

// Unbinds `handle` from every event it is bound to (CANN does the same on destroy).
void UnbindFromEvents(State& s, ObjectSlot& o, int64_t handle) {
  for (int64_t ev : o.events) {
    if (EventSlot* e = FindEvent(s, ev)) std::erase(e->objects, handle);
  }
  o.events.clear();
}

// CANN keeps a destroyed exitSave object's ring for the exit save, one per name (a newer
// one replaces an older); so do we, to register it again after a reconnect.
void KeepForExit(State& s, ObjectSlot& o) {
  std::erase_if(s.released, [&](const std::unique_ptr<ReleasedRing>& r) { return r->name == o.name; });
  auto r = std::make_unique<ReleasedRing>();
  r->name = o.name;
  r->shape = o.shape;
  r->structs = o.structs;
  r->memfd = std::move(o.memfd);
  r->mapped_bytes = o.mapped_bytes;
  r->wire_id = o.wire_id;
  s.released.push_back(std::move(r));
}

TraHandle Create(unsigned type, const char* name, const TraceAttr* attr) {
  if (type >= TRACER_TYPE_MAX || attr == nullptr || !ValidObjectName(name)) {
    return TRACE_INVALID_HANDLE;
  }
  if (type != TRACER_TYPE_SCHEDULE) return TRACE_INVALID_HANDLE;  // CANN implements schedule only
  RingShape shape;
  if (!ShapeFromAttr(attr->msgNum, attr->msgSize, attr->noLock, &shape)) return TRACE_INVALID_HANDLE;
  std::vector<atraced::proto::RingStructEntry> structs;
  if (!CopyStructEntries(attr, &structs)) return TRACE_INVALID_HANDLE;

  State& s = GetState();
  std::lock_guard lock(s.mu);
  if (!ReserveObjectRanges(s)) return TRACE_INVALID_HANDLE;
  ObjectSlot* slot = nullptr;
  uint32_t index = 0;
  for (; index < kMaxObjects; ++index) {
    if (!s.objects[index].live) {
      slot = &s.objects[index];
      break;
    }
  }
  if (slot == nullptr) return TRACE_INVALID_HANDLE;  // 100 objects, CANN's limit
  shape.counter = CounterStampsWanted() && s.link->CounterRingsAccepted(s);
  if (CreateRing(shape, name, slot->base, &slot->memfd, &slot->mapped_bytes) != 0) return TRACE_INVALID_HANDLE;
  slot->live = true;
  slot->pid = ::getpid();
  slot->name = name;
  slot->shape = shape;
  slot->exit_save = attr->exitSave;
  slot->structs = std::move(structs);
  slot->wire_id = s.next_wire_id++;
  slot->events.clear();
  // Publish: a submit that sees this word also sees the initialised header.
  slot->word.store(ObjectWord::Pack(slot->generation, true, shape), std::memory_order_release);
  s.link->Register(s, *slot);  // best effort: a later call re-registers if the daemon is away
  return MakeHandle(HandleKind::kObject, index, slot->generation);
}

}  // namespace

extern "C" {

TRACE_EXPORT TraHandle AtraceCreate(TracerType tracerType, const char* objName) {
  TraceAttr attr{};  // CANN: exitSave false, default size, locked
  return Create(RawTracerType(tracerType), objName, &attr);
}

TRACE_EXPORT TraHandle AtraceCreateWithAttr(TracerType tracerType, const char* objName, const TraceAttr* attr) {
  return Create(RawTracerType(tracerType), objName, attr);
}

TRACE_EXPORT TraHandle AtraceGetHandle(TracerType tracerType, const char* objName) {
  // Lookups are per tracer, as in CANN (tracer_core.c): only the schedule tracer has
  // objects, so a progress or statistics lookup finds none, whatever the name.
  if (RawTracerType(tracerType) != TRACER_TYPE_SCHEDULE || objName == nullptr) return TRACE_INVALID_HANDLE;
  State& s = GetState();
  std::lock_guard lock(s.mu);
  for (uint32_t i = 0; i < kMaxObjects; ++i) {
    const ObjectSlot& o = s.objects[i];
    // CANN compares at most 32 bytes and returns the first live match.
    if (o.live && ::strncmp(objName, o.name.c_str(), TRACE_NAME_LENGTH) == 0) {
      return MakeHandle(HandleKind::kObject, i, o.generation);
    }
  }
  return TRACE_INVALID_HANDLE;
}

namespace {

[[gnu::noinline]] TraStatus SubmitOnNewThread(TraHandle handle, uint8_t buffer_type, const void* buffer, uint32_t size);

// The hot path, inlined into both exported calls (a call from one exported function to
// another goes through the PLT). No lock, no system call: docs/TIMESTAMPS.md and
// ring_writer.h say what it costs against CANN's ring.
[[gnu::always_inline]] inline TraStatus Submit(TraHandle handle, uint8_t buffer_type, const void* buffer,
                                               uint32_t size) {
  // As every API call: a stack overflow on this thread is reported. Its first pass on a
  // thread goes out of line and back, so that the record's path calls nothing.
  if (__builtin_expect(!alt_stack_internal::t_checked, 0)) return SubmitOnNewThread(handle, buffer_type, buffer, size);
  uint32_t index, generation;
  if (!SplitHandle(handle, HandleKind::kObject, &index, &generation) || index >= kMaxObjects) return TRACE_FAILURE;
  State* s = PublishedState();
  if (s == nullptr) return TRACE_FAILURE;  // no object was ever made: forged
  ObjectSlot& o = s->objects[index];
  const uint64_t w = o.word.load(std::memory_order_acquire);
  if (!ObjectWord::Live(w) || ObjectWord::Generation(w) != generation) return TRACE_FAILURE;  // stale
  if (buffer == nullptr || size == 0) return TRACE_INVALID_PARAM;
  // If a destroy runs from here on, the range holds scratch memory: the write is lost, safely.
  return WriteRecord(o.base, ObjectWord::Mask(w), ObjectWord::MsgSize(w), ObjectWord::NoLock(w),
                     ObjectWord::Counter(w), static_cast<uint64_t>(handle), buffer_type, buffer, size);
}

TraStatus SubmitOnNewThread(TraHandle handle, uint8_t buffer_type, const void* buffer, uint32_t size) {
  EnsureThreadAltStack();  // sets t_checked: Submit does not come back here
  return Submit(handle, buffer_type, buffer, size);
}

}  // namespace

TRACE_EXPORT TraStatus AtraceSubmitByType(TraHandle handle, uint8_t bufferType, const void* buffer,
                                          uint32_t bufSize) {
  return Submit(handle, bufferType, buffer, bufSize);
}

TRACE_EXPORT TraStatus AtraceSubmit(TraHandle handle, const void* buffer, uint32_t bufSize) {
  return Submit(handle, 0, buffer, bufSize);
}

TRACE_EXPORT void AtraceDestroy(TraHandle handle) {
  State& s = GetState();
  std::lock_guard lock(s.mu);
  ObjectSlot* o = FindObject(s, handle);
  if (o == nullptr) return;  // stale, forged, or destroyed twice: nothing to do
  UnbindFromEvents(s, *o, handle);
  o->live = false;
  ++o->generation;
  o->word.store(ObjectWord::Pack(o->generation, false, o->shape), std::memory_order_release);
  // Scratch over the ring, in place (see ReserveObjectRanges). Only if that fails is the
  // range left as it is: the ring then stays mapped, which is a leak, not a hazard.
  ::mmap(o->base, ATR_RING_MAX_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (o->pid == ::getpid()) {
    s.link->Release(s, o->wire_id);
    if (o->exit_save) KeepForExit(s, *o);
  }
  o->memfd.reset();
  o->structs.clear();
}

}  // extern "C"
