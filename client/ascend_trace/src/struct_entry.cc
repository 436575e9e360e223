// Struct entries: the C API of CANN's tracer_core.c struct helpers. An entry's `list` points
// at a FieldList the library allocated; lists and entries are remembered in sets, so a stale
// or forged pointer is refused instead of freed or written through.
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "struct_list.h"

namespace ascend_trace {
namespace {

struct FieldList {
  std::vector<atraced::proto::RingStructField> fields;
};

struct Registry {
  std::mutex mu;
  std::set<const FieldList*> lists;
  std::set<const TraceStructEntry*> entries;  // made by AtraceStructEntryCreate
};

Registry& GetRegistry() {
  static Registry* r = new Registry;  // leaked: entries may be freed after static destructors
  return *r;
}

// Caller holds the registry mutex.
FieldList* KnownList(Registry& r, const TraceStructEntry* en) {
  if (en == nullptr) return nullptr;
  auto* list = static_cast<FieldList*>(en->list);
  return r.lists.count(list) ? list : nullptr;
}

void SetName(TraceStructEntry* en, const char* name) {
  // CANN copies names shorter than 32 bytes; a longer one leaves the name empty.
  std::memset(en->name, 0, sizeof en->name);
  if (name != nullptr && ::strnlen(name, TRACE_NAME_LENGTH) < TRACE_NAME_LENGTH) std::strcpy(en->name, name);
}

void FreeList(Registry& r, TraceStructEntry* en) {
  if (FieldList* list = KnownList(r, en)) {
    r.lists.erase(list);
    delete list;
  }
  en->list = nullptr;
}

}  // namespace

bool CopyStructEntries(const TraceAttr* attr, std::vector<atraced::proto::RingStructEntry>* out) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  out->clear();
  for (uint8_t type = 0; type < TRACE_STRUCT_ENTRY_MAX_NUM; ++type) {
    const TraceStructEntry* en = attr->handle[type];
    if (en == nullptr) continue;
    const FieldList* list = KnownList(r, en);
    if (list == nullptr) return false;
    if (list->fields.empty()) continue;  // CANN skips empty lists
    atraced::proto::RingStructEntry e;
    e.buffer_type = type;
    e.name.assign(en->name, ::strnlen(en->name, TRACE_NAME_LENGTH - 1));
    e.fields = list->fields;
    out->push_back(std::move(e));
  }
  return true;
}

}  // namespace ascend_trace

using namespace ascend_trace;

extern "C" {

TRACE_EXPORT void* AtraceStructEntryListInit(void) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  auto* list = new FieldList;
  r.lists.insert(list);
  return list;
}

TRACE_EXPORT void AtraceStructEntryName(TraceStructEntry* entry, const char* name) {
  if (entry == nullptr || name == nullptr) return;
  SetName(entry, name);
}

TRACE_EXPORT void AtraceStructItemSet(TraceStructEntry* entry, const char* name, uint8_t type, uint8_t mode,
                                      uint16_t length) {
  // CANN's checks: a list to add to, a name under 32 bytes, a known type and show mode.
  if (name == nullptr || ::strnlen(name, TRACE_NAME_LENGTH) >= TRACE_NAME_LENGTH) return;
  if ((type > TRACE_STRUCT_FIELD_TYPE_UINT64 && type < TRACE_STRUCT_ARRAY_TYPE_CHAR) ||
      type > TRACE_STRUCT_ARRAY_TYPE_UINT64 || mode > TRACE_STRUCT_SHOW_MODE_CHAR) {
    return;
  }
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  FieldList* list = KnownList(r, entry);
  if (list == nullptr || list->fields.size() >= ATR_MAX_STRUCT_FIELDS) return;
  list->fields.push_back(atraced::proto::RingStructField{type, mode, length, name});
}

TRACE_EXPORT void AtraceStructEntryExit(TraceStructEntry* entry) {
  if (entry == nullptr) return;
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  FreeList(r, entry);
}

TRACE_EXPORT TraceStructEntry* AtraceStructEntryCreate(const char* name) {
  auto* en = new TraceStructEntry{};
  SetName(en, name);
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  auto* list = new FieldList;
  r.lists.insert(list);
  en->list = list;
  r.entries.insert(en);
  return en;
}

TRACE_EXPORT void AtraceStructEntryDestroy(TraceStructEntry* en) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  if (r.entries.erase(en) == 0) return;  // not ours (or destroyed twice): never free it
  FreeList(r, en);
  delete en;
}

TRACE_EXPORT void AtraceStructItemFieldSet(TraceStructEntry* en, const char* item, uint8_t type, uint8_t mode,
                                           uint16_t len) {
  AtraceStructItemSet(en, item, type, mode, len);
}

TRACE_EXPORT void AtraceStructItemArraySet(TraceStructEntry* en, const char* item, uint8_t type, uint8_t mode,
                                           uint16_t len) {
  AtraceStructItemSet(en, item, type, mode, len);
}

TRACE_EXPORT void AtraceStructSetAttr(TraceStructEntry* en, uint8_t type, TraceAttr* attr) {
  if (attr != nullptr && en != nullptr && type < TRACE_STRUCT_ENTRY_MAX_NUM) attr->handle[type] = en;
}

}  // extern "C"
