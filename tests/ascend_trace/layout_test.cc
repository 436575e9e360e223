// CANN's struct layouts, field by field (the sizes and offsets of CANN's x86-64 build), and
// the ring header's, which the daemon reads by offset.
#include <catch2/catch.hpp>

#include <cstddef>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "atraced/proto/ring_layout.h"

static_assert(sizeof(TraStatus) == 4);
static_assert(sizeof(TraHandle) == sizeof(void*));
static_assert(sizeof(TraceStructEntry) == 40);
static_assert(offsetof(TraceStructEntry, list) == 32);
static_assert(sizeof(TraceAttr) == 120);
static_assert(offsetof(TraceAttr, exitSave) == 0);
static_assert(offsetof(TraceAttr, msgNum) == 2);
static_assert(offsetof(TraceAttr, msgSize) == 4);
static_assert(offsetof(TraceAttr, handle) == 8);
static_assert(offsetof(TraceAttr, noLock) == 88);
static_assert(offsetof(TraceAttr, reserve) == 89);
static_assert(sizeof(TraceEventAttr) == 32);
static_assert(offsetof(TraceEventAttr, reserve) == 2);
static_assert(sizeof(TraceGlobalAttr) == 40);
static_assert(offsetof(TraceGlobalAttr, deviceId) == 1);
static_assert(offsetof(TraceGlobalAttr, pid) == 4);
static_assert(offsetof(TraceGlobalAttr, reserve) == 8);
static_assert(TRACER_TYPE_MAX == 3);

static_assert(offsetof(atr_ring_header, msg_num) == ATR_RING_OFF_MSG_NUM);
static_assert(offsetof(atr_ring_header, msg_size) == ATR_RING_OFF_MSG_SIZE);
static_assert(offsetof(atr_ring_header, slot_size) == ATR_RING_OFF_SLOT_SIZE);
static_assert(offsetof(atr_ring_header, flags) == ATR_RING_OFF_FLAGS);
static_assert(offsetof(atr_ring_header, realtime_ns) == ATR_RING_OFF_REALTIME);
static_assert(offsetof(atr_ring_header, monotonic_ns) == ATR_RING_OFF_MONOTONIC);
static_assert(offsetof(atr_ring_header, write_index) == ATR_RING_OFF_WRITE_INDEX);
static_assert(offsetof(atr_ring_header, dropped) == ATR_RING_OFF_DROPPED);
static_assert(offsetof(atr_ring_slot_head, length) == 16);
static_assert(offsetof(atr_ring_slot_head, buffer_type) == 20);
// The largest legal ring fits the per-object reservation.
static_assert(ATR_RING_BYTES(1024, 112) + 4096 <= ATR_RING_MAX_BYTES);
static_assert(ATR_RING_BYTES(64, 1024) + 4096 <= ATR_RING_MAX_BYTES);

TEST_CASE("CANN's constants") {
  CHECK(TRACE_SUCCESS == 0);
  CHECK(TRACE_FAILURE == -1);
  CHECK(TRACE_INVALID_PARAM == -2);
  CHECK(TRACE_INVALID_PTR == -3);
  CHECK(TRACE_INVALID_DATA == -4);
  CHECK(TRACE_UNSUPPORTED == -5);
  CHECK(TRACE_INVALID_HANDLE == -1);
  CHECK(TRACE_UNSUPPORTED_HANDLE == -2);
  CHECK(DEFAULT_ATRACE_MSG_NUM == 1024U);
  CHECK(DEFAULT_ATRACE_MSG_SIZE == 112U);
  CHECK(TRACE_NAME_LENGTH == 32U);
  CHECK(TRACE_STRUCT_ENTRY_MAX_NUM == 10U);
  CHECK(TRACE_STRUCT_ARRAY_TYPE_UINT64 == 108);
  CHECK(TRACE_STRUCT_SHOW_MODE_CHAR == 3);
  CHECK(TRACE_LOCK_FREE == 1U);
}
