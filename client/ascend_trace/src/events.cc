// Events (CANN's trace_event.c): named triggers bound to up to five objects; a report saves
// them through the daemon.
#include <algorithm>
#include <cstring>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "daemon_link.h"
#include "handles.h"
#include "state.h"

using namespace ascend_trace;

namespace {

// CANN: a name is valid if it is shorter than 32 bytes; any bytes (it names no file).
bool ValidEventName(const char* name) {
  return name != nullptr && ::strnlen(name, TRACE_NAME_LENGTH) < TRACE_NAME_LENGTH;
}

TraEventHandle FindByName(State& s, const char* name) {
  for (uint32_t i = 0; i < s.events.size(); ++i) {
    if (s.events[i].live && s.events[i].name == name) return MakeHandle(HandleKind::kEvent, i, s.events[i].generation);
  }
  return TRACE_INVALID_HANDLE;
}

// A report: CANN ignores (with success) an event bound to nothing and one past limitedNum.
TraStatus Report(TraEventHandle eventHandle, bool wait) {
  State& s = GetState();
  std::lock_guard lock(s.mu);
  EventSlot* e = FindEvent(s, eventHandle);
  if (e == nullptr) return TRACE_INVALID_HANDLE;
  if (e->objects.empty()) return TRACE_SUCCESS;
  if (e->limited_num != 0) {
    if (e->report_num >= e->limited_num) return TRACE_SUCCESS;
    ++e->report_num;  // counted before the save, as CANN does
  }
  std::vector<const ObjectSlot*> objects;
  for (int64_t h : e->objects) {
    const ObjectSlot* o = FindObject(s, h);
    if (o != nullptr && o->pid == ::getpid()) objects.push_back(o);  // CANN saves only its own
  }
  if (objects.empty()) return TRACE_SUCCESS;
  return s.link->Report(s, objects, wait) == 0 ? TRACE_SUCCESS : TRACE_FAILURE;
}

}  // namespace

extern "C" {

TRACE_EXPORT TraEventHandle AtraceEventCreate(const char* eventName) {
  if (!ValidEventName(eventName)) return TRACE_INVALID_HANDLE;
  State& s = GetState();
  std::lock_guard lock(s.mu);
  if (FindByName(s, eventName) != TRACE_INVALID_HANDLE) return TRACE_INVALID_HANDLE;  // duplicate name
  uint32_t index = 0;
  while (index < s.events.size() && s.events[index].live) ++index;
  if (index == s.events.size()) {
    if (index >= kMaxEvents) return TRACE_INVALID_HANDLE;
    s.events.emplace_back();
  }
  EventSlot& e = s.events[index];
  e.live = true;
  e.name = eventName;
  e.limited_num = 0;
  e.report_num = 0;
  e.objects.clear();
  return MakeHandle(HandleKind::kEvent, index, e.generation);
}

TRACE_EXPORT TraEventHandle AtraceEventGetHandle(const char* eventName) {
  if (!ValidEventName(eventName)) return TRACE_INVALID_HANDLE;
  State& s = GetState();
  std::lock_guard lock(s.mu);
  return FindByName(s, eventName);
}

TRACE_EXPORT void AtraceEventDestroy(TraEventHandle eventHandle) {
  State& s = GetState();
  std::lock_guard lock(s.mu);
  EventSlot* e = FindEvent(s, eventHandle);
  if (e == nullptr) return;
  for (int64_t h : e->objects) {
    if (ObjectSlot* o = FindObject(s, h)) std::erase(o->events, eventHandle);
  }
  e->objects.clear();
  e->live = false;
  ++e->generation;
}

TRACE_EXPORT TraStatus AtraceEventBindTrace(TraEventHandle eventHandle, TraHandle handle) {
  State& s = GetState();
  std::lock_guard lock(s.mu);
  EventSlot* e = FindEvent(s, eventHandle);
  if (e == nullptr) return TRACE_INVALID_PARAM;
  if (e->objects.size() >= kMaxObjectsPerEvent) return TRACE_FAILURE;
  ObjectSlot* o = FindObject(s, handle);
  if (o == nullptr) return TRACE_INVALID_PARAM;
  if (o->events.size() >= kMaxEventsPerObject) return TRACE_FAILURE;
  // Binding the same pair twice would save the object twice per report; once is enough.
  if (std::find(e->objects.begin(), e->objects.end(), handle) != e->objects.end()) return TRACE_SUCCESS;
  e->objects.push_back(handle);
  o->events.push_back(eventHandle);
  return TRACE_SUCCESS;
}

TRACE_EXPORT TraStatus AtraceEventSetAttr(TraEventHandle eventHandle, const TraceEventAttr* attr) {
  State& s = GetState();
  std::lock_guard lock(s.mu);
  EventSlot* e = FindEvent(s, eventHandle);
  if (e == nullptr || attr == nullptr) return TRACE_INVALID_PARAM;
  e->limited_num = attr->limitedNum;
  return TRACE_SUCCESS;
}

TRACE_EXPORT TraStatus AtraceEventReportSync(TraEventHandle eventHandle) { return Report(eventHandle, true); }

TRACE_EXPORT TraStatus AtraceEventReport(TraEventHandle eventHandle) { return Report(eventHandle, false); }

}  // extern "C"
