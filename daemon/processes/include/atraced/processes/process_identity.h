// A client process pinned at accept: the pid SO_PEERCRED gave, the start time /proc gave for
// it, the credentials it connected with and a pidfd that refers to that very process (the
// socket's SO_PEERPIDFD, else pidfd_open right after accept). A pid alone names whoever has
// it now: after an exit and a reuse, or after an exec of a set-id program, it is someone
// else. Every look at the process (CRASH, HELLO's reads of /proc) first asks
// WhyNotInspectable, which says no unless the process is still the one that connected,
// with the same credentials, and dumpable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "atraced/base/unique_fd.h"
#include "atraced/processes/process_table.h"

namespace atraced {

struct ProcessIdentity {
  int32_t pid = 0;
  uint64_t start_ticks = 0;  // 0: unknown (the connector was gone before it could be read)
  uint32_t uid = 0;          // SO_PEERCRED's, at connect
  uint32_t gid = 0;
};

// The peer of a connected Unix socket as a pidfd: SO_PEERPIDFD (Linux 6.5), else
// pidfd_open(pid) (which may already name a reused pid: the start time check below is what
// catches that), else invalid (no pidfd on this kernel; the start time is all there is).
UniqueFd PeerPidfd(int socket_fd, int32_t pid);

// Whether the process a pidfd refers to has not been reaped (a zombie still counts).
// True for an invalid pidfd: there is nothing to say otherwise.
bool PidfdAlive(const UniqueFd& pidfd);

// Reads the facts of `pid` for a connection and pins them: nullopt facts when /proc cannot
// tell, or when the pidfd says the connector was gone (reaped) by the time /proc was read,
// so the facts would be another process's.
std::optional<ProcessFacts> LookupPinned(ProcessTable& table, int32_t pid, const UniqueFd& pidfd);

// nullopt if the pinned process may be looked at now; else why not, one sentence naming
// the pid: it was reaped (pidfd), its pid belongs to another process (start time), its
// credentials are not all four the ones it connected with (a set-id exec), or it is not
// dumpable. Reads /proc/<pid> once and checks the pidfd after it, so what was read is the
// pinned process's.
std::optional<std::string> WhyNotInspectable(ProcessTable& table, const ProcessIdentity& pinned,
                                             const UniqueFd& pidfd);

}  // namespace atraced
