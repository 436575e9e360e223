// Struct entries (CANN's TraceStructEntry): the field lists behind their `list` pointers.
#pragma once

#include <vector>

#include "atrace_types.h"
#include "atraced/proto/codec.h"

namespace ascend_trace {

// Copies the layouts attr->handle[0..9] point at into *out (buffer type order), skipping
// empty ones. False if one has a list this library did not make (stale or forged): CANN
// fails the create then too, having found no list.
bool CopyStructEntries(const TraceAttr* attr, std::vector<atraced::proto::RingStructEntry>* out);

}  // namespace ascend_trace
