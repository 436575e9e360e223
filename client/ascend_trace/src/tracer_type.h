// The tracer type a caller passed. CANN's API takes a C enum, and a C caller may pass any
// int in it; in C++ a value outside the enumerators' range is not a TracerType at all, and
// reading it as one is undefined (clang's UBSan says so). Its bytes are read instead.
#pragma once

#include <cstring>

#include "atrace_types.h"

namespace ascend_trace {

inline unsigned RawTracerType(const TracerType& type) {
  static_assert(sizeof(TracerType) == sizeof(unsigned), "a C enum is an int here");
  unsigned raw;
  std::memcpy(&raw, &type, sizeof raw);
  return raw;
}

}  // namespace ascend_trace
