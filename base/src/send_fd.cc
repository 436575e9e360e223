#include "atraced/base/send_fd.h"

#include <cstring>

namespace atraced {

ssize_t SendWithFd(int socket, const void* data, size_t len, int fd, int flags) {
  iovec iov{const_cast<void*>(data), len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (fd >= 0) {
    std::memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &fd, sizeof fd);
  }
  return ::sendmsg(socket, &msg, flags);
}

ssize_t RecvWithFds(int socket, void* buf, size_t len, int flags, size_t max_fds, std::vector<UniqueFd>* fds,
                    bool* truncated) {
  iovec iov{buf, len};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (max_fds == 0 ? 1 : max_fds)));
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  const ssize_t n = ::recvmsg(socket, &msg, flags | MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
      fds->emplace_back(fd);
    }
  }
  if (truncated) *truncated = (msg.msg_flags & MSG_CTRUNC) != 0;
  return n;
}

}  // namespace atraced
