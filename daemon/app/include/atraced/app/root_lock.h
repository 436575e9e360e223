// One daemon per trace root (issue 23): two daemons on one root would hand out the same
// sequence numbers, write one order log from two processes, and leave each other's
// directories unmanaged at the next start. The daemon takes an exclusive open-file-
// description lock on <root>/atrace/.atraced_lock before recovery and holds it for its
// life; the kernel drops it when the daemon exits, however it exits, so no stale lock
// survives a SIGKILL. The file holds the holder's pid, for the message a second daemon
// prints (an OFD lock does not name its owner to F_OFD_GETLK).
#pragma once

#include <string>

#include "atraced/base/unique_fd.h"
#include "atraced/base/status.h"

namespace atraced {

inline constexpr const char* kRootLockName = ".atraced_lock";

// Locks `trace_dir`'s lock file and writes this process's pid into it. EBUSY, with a message
// that names the root and the holder's pid where the file says it, when another daemon holds it.
Result<UniqueFd> LockTraceRoot(const std::string& trace_dir);

}  // namespace atraced
