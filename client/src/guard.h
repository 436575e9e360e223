// Exceptions must not cross the C ABI: every entry point runs its body through Guarded.
#pragma once

#include <errno.h>

#include <new>

namespace atrace_client_internal {

template <class F>
int Guarded(F body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  } catch (...) {
    return -EIO;
  }
}

}  // namespace atrace_client_internal
