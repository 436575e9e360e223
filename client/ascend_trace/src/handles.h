// Handles are not pointers: a handle names a table slot and the generation of the object
// that lived there when the handle was made. A stale handle (the object was destroyed, the
// slot possibly reused) or a forged one fails the check and is refused; the library never
// dereferences a value the caller passed.
//
//   bits 0..19   slot index (objects use 0..99)
//   bits 20..51  generation, bumped on every destroy
//   bits 52..58  kind tag, so an event handle is never taken for an object handle
// Every valid handle is positive, as CANN's callers expect (they test `< 0` for errors).
#pragma once

#include <cstdint>

namespace ascend_trace {

enum class HandleKind : uint64_t { kObject = 0x41, kEvent = 0x45 };

inline int64_t MakeHandle(HandleKind kind, uint32_t index, uint32_t generation) {
  return static_cast<int64_t>((static_cast<uint64_t>(kind) << 52) | (static_cast<uint64_t>(generation) << 20) |
                              (index & 0xfffffu));
}

// False if `h` is not a handle of this kind; otherwise the slot index and generation it names
// (which the caller still checks against the table).
inline bool SplitHandle(int64_t h, HandleKind kind, uint32_t* index, uint32_t* generation) {
  if (h <= 0) return false;
  const auto u = static_cast<uint64_t>(h);
  if ((u >> 52) != static_cast<uint64_t>(kind)) return false;
  *index = static_cast<uint32_t>(u & 0xfffffu);
  *generation = static_cast<uint32_t>(u >> 20);
  return true;
}

}  // namespace ascend_trace
