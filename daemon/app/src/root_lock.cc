#include "atraced/app/root_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace atraced {

Result<UniqueFd> LockTraceRoot(const std::string& trace_dir) {
  const std::string path = trace_dir + "/" + kRootLockName;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640));
  if (!fd.valid()) {
    int err = errno;
    return Status::Error(err, ErrnoMessage("cannot open the root's lock file " + path, err));
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd.get(), F_OFD_SETLK, &lock) != 0) {
    int err = errno;
    if (err != EAGAIN && err != EACCES) return Status::Error(err, ErrnoMessage("cannot lock " + path, err));
    char buf[32] = {};
    const ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    std::string holder;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) holder += buf[i];
    return Status::Error(EBUSY, "the trace directory " + trace_dir + " is already served by another atraced" +
                                    (holder.empty() ? "" : " (pid " + holder + ")") + ", which holds " + path +
                                    ": one daemon per trace root; stop it, or give this one another --root");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    int err = errno;
    return Status::Error(err, ErrnoMessage("cannot write " + path, err));
  }
  return fd;
}

}  // namespace atraced
