#include "common/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <utility>

namespace atracectl {

NewOutputFile::NewOutputFile(std::string command, std::string path)
    : command_(std::move(command)), path_(std::move(path)) {
  // O_EXCL alone already refuses any link at the name; O_NOFOLLOW says so to the reader.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd_ < 0) {
    const int err = errno;
    std::cerr << "atracectl: " << command_ << ": " << path_ << ": " << std::strerror(err)
              << (err == EEXIST ? " (an output file is never written over, nor through a link)" : "") << "\n";
  }
}

NewOutputFile::~NewOutputFile() {
  if (fd_ < 0) return;
  if (!keep_) {
    // Not unlink(path_): the name may be someone else's file by now; the descriptor is ours.
    const bool emptied = ::ftruncate(fd_, 0) == 0;
    std::cerr << "atracectl: " << command_ << ": " << path_ << " is left "
              << (emptied ? "empty" : "incomplete (it could not be emptied)") << "; remove it yourself\n";
  }
  ::close(fd_);
}

bool NewOutputFile::Write(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::cerr << "atracectl: " << command_ << ": " << path_ << ": " << std::strerror(n < 0 ? errno : EIO) << "\n";
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace atracectl
