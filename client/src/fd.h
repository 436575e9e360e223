// The library's owned descriptor is the one the daemon uses too (base/unique_fd.h), which
// closes with close(), never shutdown(), so a forked child never cuts the parent's connection.
#pragma once

#include "atraced/base/unique_fd.h"

namespace atrace_client_internal {

using Fd = atraced::UniqueFd;

}  // namespace atrace_client_internal
