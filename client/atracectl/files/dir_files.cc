#include "files/dir_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "atraced/base/unique_fd.h"

namespace atracectl {

std::vector<std::string> SortedNames(const std::string& dir, int* err) {
  std::vector<std::string> out;
  if (err) *err = 0;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr && err) *err = errno;
  if (d != nullptr) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

atraced::Status ReadWhole(const std::string& path, size_t limit, std::string* out) {
  bool cut = false;
  return ReadUpTo(path, limit, limit, out, &cut);
}

atraced::Status ReadUpTo(const std::string& path, size_t limit, size_t want, std::string* out, bool* cut) {
  using atraced::Status;
  atraced::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return Status::Error(errno, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Status::Error(EINVAL, "not a regular file");
  if (static_cast<uint64_t>(st.st_size) > limit) {
    return Status::Error(EFBIG, "larger than " + std::to_string(limit >> 20) + " MiB");
  }
  *cut = static_cast<size_t>(st.st_size) > want;
  out->resize(std::min(static_cast<size_t>(st.st_size), want));
  size_t got = 0;
  while (got < out->size()) {
    const ssize_t n = ::read(fd.get(), out->data() + got, out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error(errno, std::strerror(errno));
    if (n == 0) return Status::Error(EIO, "shorter than it was a moment ago");
    got += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace atracectl
