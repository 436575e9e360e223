#include "atraced/processes/process_identity.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace atraced {
namespace {

#ifndef SO_PEERPIDFD
constexpr int SO_PEERPIDFD = 77;  // Linux 6.5; glibc 2.36's headers do not have it yet
#endif

std::string Ids(const std::array<uint32_t, 4>& ids) {
  return std::to_string(ids[0]) + "/" + std::to_string(ids[1]) + "/" + std::to_string(ids[2]) + "/" +
         std::to_string(ids[3]);
}

}  // namespace

UniqueFd PeerPidfd(int socket_fd, int32_t pid) {
  int fd = -1;
  socklen_t len = sizeof fd;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0 && len == sizeof fd && fd >= 0) {
    return UniqueFd(fd);
  }
#ifdef SYS_pidfd_open
  if (pid > 0) return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
#endif
  return UniqueFd();
}

bool PidfdAlive(const UniqueFd& pidfd) {
  if (!pidfd.valid()) return true;
#ifdef SYS_pidfd_send_signal
  // Signal 0 checks without sending; EPERM would still mean it exists.
  if (::syscall(SYS_pidfd_send_signal, pidfd.get(), 0, nullptr, 0) == 0) return true;
  return errno != ESRCH;
#else
  return true;
#endif
}

std::optional<ProcessFacts> LookupPinned(ProcessTable& table, int32_t pid, const UniqueFd& pidfd) {
  auto facts = table.Lookup(pid);
  // Read first, then ask the pidfd: if the connector is still there now, what /proc said was
  // about it (its pid cannot have been reused while it exists).
  if (facts && !PidfdAlive(pidfd)) return std::nullopt;
  return facts;
}

std::optional<std::string> WhyNotInspectable(ProcessTable& table, const ProcessIdentity& pinned,
                                             const UniqueFd& pidfd) {
  const std::string who = "pid " + std::to_string(pinned.pid);
  if (pinned.start_ticks == 0) return who + " was gone before the daemon could read who it was";
  if (!PidfdAlive(pidfd)) return who + " has exited; its connection is held by another process";
  auto facts = table.Lookup(pinned.pid);
  if (!facts) return who + " no longer exists";
  if (facts->start_ticks != pinned.start_ticks) {
    return who + " is another process now (its start time changed since it connected)";
  }
  if (!facts->creds) return who + "'s credentials are not readable";
  const ProcessCredentials& c = *facts->creds;
  for (int i = 0; i < 4; ++i) {
    if (c.uids[i] != pinned.uid || c.gids[i] != pinned.gid) {
      return who + " runs with uids " + Ids(c.uids) + " and gids " + Ids(c.gids) + ", not the uid " +
             std::to_string(pinned.uid) + " and gid " + std::to_string(pinned.gid) +
             " it connected with (a set-id program is never inspected)";
    }
  }
  if (!c.dumpable) return who + " is not dumpable (PR_SET_DUMPABLE, or a credential change)";
  if (!PidfdAlive(pidfd)) return who + " has exited; its connection is held by another process";
  return std::nullopt;
}

}  // namespace atraced
