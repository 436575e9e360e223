// Every limit and error status of the public API, checked against CANN's (reference
// section 1 and CANN's source). No daemon: $ATRACED_SOCKET points nowhere.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "test_env.h"

namespace {

TraceAttr Attr(uint16_t num, uint16_t size, uint8_t no_lock = 0) {
  TraceAttr a{};
  a.msgNum = num;
  a.msgSize = size;
  a.noLock = no_lock;
  return a;
}

// Destroys what a test created, whatever it asserts.
template <typename Handle, void (*Destroy)(Handle)>
struct Owned {
  std::vector<Handle> handles;
  Handle Add(Handle h) {
    if (h > 0) handles.push_back(h);
    return h;
  }
  ~Owned() {
    for (Handle h : handles) Destroy(h);
  }
};
using Objects = Owned<TraHandle, AtraceDestroy>;
using Events = Owned<TraEventHandle, AtraceEventDestroy>;

}  // namespace

TEST_CASE("tracer types: only schedule has objects, unknown types get TRACE_INVALID_HANDLE") {
  Objects objs;
  CHECK(objs.Add(AtraceCreate(TRACER_TYPE_SCHEDULE, "sched")) > 0);
  CHECK(AtraceCreate(TRACER_TYPE_PROGRESS, "p") == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreate(TRACER_TYPE_STATISTICS, "s") == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreate(TRACER_TYPE_MAX, "m") == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreate(static_cast<TracerType>(-1), "neg") == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreate(static_cast<TracerType>(77), "big") == TRACE_INVALID_HANDLE);
  CHECK(AtraceGetHandle(TRACER_TYPE_MAX, "sched") == TRACE_INVALID_HANDLE);
  CHECK(AtraceSave(TRACER_TYPE_MAX, true) == TRACE_INVALID_PARAM);
  CHECK(AtraceSave(TRACER_TYPE_PROGRESS, true) == TRACE_FAILURE);
}

TEST_CASE("object names: NULL, 32 bytes and more, and non-file-name bytes are refused") {
  Objects objs;
  CHECK(AtraceCreate(TRACER_TYPE_SCHEDULE, nullptr) == TRACE_INVALID_HANDLE);
  const std::string n31(31, 'a'), n32(32, 'b');
  CHECK(objs.Add(AtraceCreate(TRACER_TYPE_SCHEDULE, n31.c_str())) > 0);
  CHECK(AtraceCreate(TRACER_TYPE_SCHEDULE, n32.c_str()) == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreate(TRACER_TYPE_SCHEDULE, "") == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreate(TRACER_TYPE_SCHEDULE, "a/b") == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreate(TRACER_TYPE_SCHEDULE, "..") == TRACE_INVALID_HANDLE);
  CHECK(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "x", nullptr) == TRACE_INVALID_HANDLE);
}

TEST_CASE("TraceAttr ranges: msgNum 1..1024, msgSize 64..1024, 128 KiB with CANN's 16-byte head") {
  Objects objs;
  auto create = [&](uint16_t num, uint16_t size) {
    TraceAttr a = Attr(num, size);
    return objs.Add(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "sized", &a));
  };
  CHECK(create(0, 0) > 0);        // defaults 1024 x 112: exactly 128 KiB
  CHECK(create(1, 64) > 0);
  CHECK(create(1024, 0) > 0);
  CHECK(create(1025, 0) == TRACE_INVALID_HANDLE);
  CHECK(create(0, 63) == TRACE_INVALID_HANDLE);
  CHECK(create(0, 1025) == TRACE_INVALID_HANDLE);
  CHECK(create(0, 113) == TRACE_INVALID_HANDLE);   // (113 + 16) * 1024 > 131072
  CHECK(create(64, 1024) > 0);                     // 1040 * 64 = 66560
  CHECK(create(65, 1024) == TRACE_INVALID_HANDLE); // rounds to 128: 1040 * 128 > 131072
  CHECK(create(513, 112) > 0);                    // rounds to 1024: exactly 128 KiB
}

TEST_CASE("100 objects per tracer, and a destroyed slot is usable again") {
  Objects objs;
  for (int i = 0; i < 100; ++i) {
    TraceAttr a = Attr(1, 64);  // small rings: this test is about the count
    REQUIRE(objs.Add(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, ("o" + std::to_string(i)).c_str(), &a)) > 0);
  }
  TraceAttr a = Attr(1, 64);
  CHECK(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "one_too_many", &a) == TRACE_INVALID_HANDLE);
  AtraceDestroy(objs.handles.back());
  objs.handles.pop_back();
  CHECK(objs.Add(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "again", &a)) > 0);
}

TEST_CASE("submit: statuses, stale handles, destroy twice, submit after destroy") {
  Objects objs;
  const TraHandle h = objs.Add(AtraceCreate(TRACER_TYPE_SCHEDULE, "sub"));
  REQUIRE(h > 0);
  const char text[] = "hello";
  CHECK(AtraceSubmit(h, text, sizeof text - 1) == TRACE_SUCCESS);
  CHECK(AtraceSubmitByType(h, 3, text, sizeof text - 1) == TRACE_SUCCESS);
  CHECK(AtraceSubmit(h, nullptr, 5) == TRACE_INVALID_PARAM);
  CHECK(AtraceSubmit(h, text, 0) == TRACE_INVALID_PARAM);
  std::string big(5000, 'x');  // longer than msgSize: truncated, as CANN does
  CHECK(AtraceSubmit(h, big.data(), static_cast<uint32_t>(big.size())) == TRACE_SUCCESS);

  CHECK(AtraceSubmit(TRACE_INVALID_HANDLE, text, 5) == TRACE_FAILURE);
  CHECK(AtraceSubmit(0, text, 5) == TRACE_FAILURE);
  CHECK(AtraceSubmit(h + 1, text, 5) == TRACE_FAILURE);            // forged: another slot or generation
  CHECK(AtraceSubmit(h ^ (1ll << 30), text, 5) == TRACE_FAILURE);  // forged generation
  CHECK(AtraceSubmit(reinterpret_cast<TraHandle>(&objs), text, 5) == TRACE_FAILURE);  // a pointer

  AtraceDestroy(h);
  objs.handles.clear();
  CHECK(AtraceSubmit(h, text, 5) == TRACE_FAILURE);
  AtraceDestroy(h);  // twice: no effect
  const TraHandle again = objs.Add(AtraceCreate(TRACER_TYPE_SCHEDULE, "sub"));
  REQUIRE(again > 0);
  CHECK(again != h);                                 // same slot, new generation
  CHECK(AtraceSubmit(h, text, 5) == TRACE_FAILURE);  // the old handle stays stale
  CHECK(AtraceSubmit(again, text, 5) == TRACE_SUCCESS);
  AtraceDestroy(h);  // a stale handle must not destroy the new object
  CHECK(AtraceSubmit(again, text, 5) == TRACE_SUCCESS);
}

TEST_CASE("get handle: first live object of that name") {
  Objects objs;
  const TraHandle h = objs.Add(AtraceCreate(TRACER_TYPE_SCHEDULE, "named"));
  CHECK(AtraceGetHandle(TRACER_TYPE_SCHEDULE, "named") == h);
  CHECK(AtraceGetHandle(TRACER_TYPE_SCHEDULE, "other") == TRACE_INVALID_HANDLE);
  // Per tracer type, as CANN looks up: the progress and statistics tracers have no objects.
  CHECK(AtraceGetHandle(TRACER_TYPE_PROGRESS, "named") == TRACE_INVALID_HANDLE);
  CHECK(AtraceGetHandle(TRACER_TYPE_STATISTICS, "named") == TRACE_INVALID_HANDLE);
  CHECK(AtraceGetHandle(TRACER_TYPE_SCHEDULE, nullptr) == TRACE_INVALID_HANDLE);
  AtraceDestroy(h);
  objs.handles.clear();
  CHECK(AtraceGetHandle(TRACER_TYPE_SCHEDULE, "named") == TRACE_INVALID_HANDLE);
}

TEST_CASE("events: names, duplicates, lookup, destroy") {
  Events evs;
  CHECK(AtraceEventCreate(nullptr) == TRACE_INVALID_HANDLE);
  CHECK(AtraceEventCreate(std::string(32, 'e').c_str()) == TRACE_INVALID_HANDLE);
  const TraEventHandle e = evs.Add(AtraceEventCreate(std::string(31, 'e').c_str()));
  CHECK(e > 0);
  CHECK(AtraceEventCreate(std::string(31, 'e').c_str()) == TRACE_INVALID_HANDLE);  // duplicate
  CHECK(AtraceEventGetHandle(std::string(31, 'e').c_str()) == e);
  CHECK(AtraceEventGetHandle("missing") == TRACE_INVALID_HANDLE);
  CHECK(AtraceEventGetHandle(nullptr) == TRACE_INVALID_HANDLE);
  AtraceEventDestroy(e);
  evs.handles.clear();
  CHECK(AtraceEventGetHandle(std::string(31, 'e').c_str()) == TRACE_INVALID_HANDLE);
  CHECK(AtraceEventReportSync(e) == TRACE_INVALID_HANDLE);  // stale
  AtraceEventDestroy(e);                                    // twice: no effect
  const TraEventHandle e2 = evs.Add(AtraceEventCreate(std::string(31, 'e').c_str()));  // the name is free again
  CHECK(e2 > 0);
  CHECK(e2 != e);
}

TEST_CASE("bind: 5 objects per event, 64 events per object, bad handles") {
  Objects objs;
  Events evs;
  std::vector<TraHandle> h;
  TraceAttr a = Attr(1, 64);
  for (int i = 0; i < 6; ++i) {
    h.push_back(objs.Add(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, ("b" + std::to_string(i)).c_str(), &a)));
  }
  const TraEventHandle e = evs.Add(AtraceEventCreate("bind"));
  for (int i = 0; i < 5; ++i) CHECK(AtraceEventBindTrace(e, h[i]) == TRACE_SUCCESS);
  CHECK(AtraceEventBindTrace(e, h[5]) == TRACE_FAILURE);
  CHECK(AtraceEventBindTrace(TRACE_INVALID_HANDLE, h[0]) == TRACE_INVALID_PARAM);
  CHECK(AtraceEventBindTrace(h[0], h[0]) == TRACE_INVALID_PARAM);  // an object handle is no event
  const TraEventHandle e2 = evs.Add(AtraceEventCreate("bind2"));
  CHECK(AtraceEventBindTrace(e2, TRACE_INVALID_HANDLE) == TRACE_INVALID_PARAM);
  CHECK(AtraceEventBindTrace(e2, e) == TRACE_INVALID_PARAM);  // an event handle is no object

  for (int i = 0; i < 63; ++i) {
    const TraEventHandle x = evs.Add(AtraceEventCreate(("many" + std::to_string(i)).c_str()));
    REQUIRE(AtraceEventBindTrace(x, h[5]) == TRACE_SUCCESS);
  }
  CHECK(AtraceEventBindTrace(e2, h[5]) == TRACE_SUCCESS);  // the 64th
  const TraEventHandle x = evs.Add(AtraceEventCreate("one_more"));
  CHECK(AtraceEventBindTrace(x, h[5]) == TRACE_FAILURE);   // the 65th

  // Destroying an object unbinds it: the event has room again.
  AtraceDestroy(h[4]);
  CHECK(AtraceEventBindTrace(e, h[5]) == TRACE_FAILURE);  // h[5] still has 64 events
  AtraceEventDestroy(x);
  CHECK(AtraceEventBindTrace(e, h[5]) == TRACE_FAILURE);  // x was never bound: still 64
  AtraceEventDestroy(e2);
  CHECK(AtraceEventBindTrace(e, h[5]) == TRACE_SUCCESS);  // e2's binding was released
}

TEST_CASE("event attr and reports without a daemon") {
  Objects objs;
  Events evs;
  const TraEventHandle e = evs.Add(AtraceEventCreate("attr"));
  TraceEventAttr attr{};
  attr.limitedNum = 1;
  CHECK(AtraceEventSetAttr(e, nullptr) == TRACE_INVALID_PARAM);
  CHECK(AtraceEventSetAttr(TRACE_INVALID_HANDLE, &attr) == TRACE_INVALID_PARAM);
  CHECK(AtraceEventSetAttr(e, &attr) == TRACE_SUCCESS);
  // Unbound: ignored with success (CANN).
  CHECK(AtraceEventReportSync(e) == TRACE_SUCCESS);
  CHECK(AtraceEventReport(e) == TRACE_SUCCESS);
  const TraHandle h = objs.Add(AtraceCreate(TRACER_TYPE_SCHEDULE, "reported"));
  REQUIRE(AtraceEventBindTrace(e, h) == TRACE_SUCCESS);
  CHECK(AtraceEventReportSync(e) == TRACE_FAILURE);  // no daemon: the one allowed report fails
  CHECK(AtraceEventReportSync(e) == TRACE_SUCCESS);  // past limitedNum: ignored (CANN)
  CHECK(AtraceSave(TRACER_TYPE_SCHEDULE, true) == TRACE_FAILURE);
}

TEST_CASE("global attr, and without an NPU driver the device side is unsupported, as CANN decides first") {
  TraceGlobalAttr g{};
  CHECK(AtraceSetGlobalAttr(nullptr) == TRACE_FAILURE);
  CHECK(AtraceSetGlobalAttr(&g) == TRACE_SUCCESS);
  // No libascend_hal.so on this test's library path: CANN answers -5 before it looks at the
  // device id (device traces through a driver double: tests/ascend_trace/device_*).
  CHECK(AtraceReportStart(0) == TRACE_UNSUPPORTED);
  CHECK(AtraceReportStart(-1) == TRACE_UNSUPPORTED);
  CHECK(AtraceReportStart(64) == TRACE_UNSUPPORTED);
  AtraceReportStop(0);
  AtraceReportStop(-1);
}

TEST_CASE("struct entries: fields, bad types and modes, forged lists, set attr") {
  Objects objs;
  TraceStructEntry* en = AtraceStructEntryCreate("task");
  REQUIRE(en != nullptr);
  CHECK(std::string(en->name) == "task");
  AtraceStructItemFieldSet(en, "id", TRACE_STRUCT_FIELD_TYPE_UINT32, TRACE_STRUCT_SHOW_MODE_HEX, 4);
  AtraceStructItemArraySet(en, "tag", TRACE_STRUCT_ARRAY_TYPE_CHAR, TRACE_STRUCT_SHOW_MODE_CHAR, 16);
  AtraceStructItemFieldSet(en, "bad_type", 9, 0, 4);    // ignored, as in CANN
  AtraceStructItemFieldSet(en, "bad_mode", 5, 4, 4);    // ignored
  AtraceStructItemFieldSet(en, std::string(32, 'n').c_str(), 5, 0, 4);  // ignored
  AtraceStructItemFieldSet(en, nullptr, 5, 0, 4);       // ignored
  AtraceStructItemFieldSet(nullptr, "x", 5, 0, 4);      // ignored

  TraceAttr attr{};
  AtraceStructSetAttr(en, 0, &attr);
  CHECK(attr.handle[0] == en);
  AtraceStructSetAttr(en, TRACE_STRUCT_ENTRY_MAX_NUM, &attr);  // out of range: ignored
  AtraceStructSetAttr(en, 1, nullptr);
  CHECK(objs.Add(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "binary", &attr)) > 0);

  TraceStructEntry forged{};
  std::strcpy(forged.name, "forged");
  forged.list = &attr;  // not a list the library made
  attr.handle[1] = &forged;
  CHECK(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "forged", &attr) == TRACE_INVALID_HANDLE);
  AtraceStructItemSet(&forged, "x", 5, 0, 4);  // must not write through the forged list
  AtraceStructEntryDestroy(&forged);           // not ours: ignored, never freed
  attr.handle[1] = nullptr;

  // A copy of the entry keeps the list pointer after the list is freed: stale, refused
  // without being dereferenced. An entry whose list was freed has none: refused as in CANN.
  TraceStructEntry stale = *en;
  AtraceStructEntryExit(en);
  attr.handle[0] = &stale;
  CHECK(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "stale", &attr) == TRACE_INVALID_HANDLE);
  attr.handle[0] = en;
  CHECK(en->list == nullptr);
  CHECK(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "no_list", &attr) == TRACE_INVALID_HANDLE);
  AtraceStructEntryDestroy(en);
  AtraceStructEntryDestroy(en);  // twice: ignored (the pointer is no longer ours, never read)

  // The macro path (atrace_api.h).
  TRACE_STRUCT_DEFINE_ENTRY(stack_en);
  TRACE_STRUCT_DEFINE_ENTRY_NAME(stack_en, "macro");
  TRACE_STRUCT_DEFINE_FIELD_INT32(stack_en, count);
  TRACE_STRUCT_DEFINE_FIELD_UINT64(stack_en, addr, TRACE_STRUCT_SHOW_MODE_HEX);
  TRACE_STRUCT_DEFINE_FIELD_CHAR(stack_en, flag);
  TRACE_STRUCT_DEFINE_ARRAY_UINT8(stack_en, bytes, TRACE_STRUCT_SHOW_MODE_HEX, 8);
  TraceAttr attr2{};
  TRACE_STRUCT_SET_ATTR(stack_en, 2, &attr2);
  CHECK(attr2.handle[2] == &stack_en);
  CHECK(objs.Add(AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "macro", &attr2)) > 0);
  TRACE_STRUCT_UNDEFINE_ENTRY(stack_en);
  CHECK(stack_en.list == nullptr);
}
