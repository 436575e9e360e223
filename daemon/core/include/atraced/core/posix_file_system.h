// FileSystem on the real disk. It holds a descriptor of <root>/atrace and reaches every
// path with openat/mkdirat/unlinkat/renameat relative to it, component by component with
// O_NOFOLLOW, so a symlink planted anywhere below the trace directory is never followed.
#pragma once

#include <memory>

#include "atraced/core/file_system.h"

namespace atraced {

class PosixFileSystem final : public FileSystem {
 public:
  // Creates <root>/atrace (0750) if needed and opens it. `root` must be absolute.
  static Result<std::unique_ptr<PosixFileSystem>> Open(const std::string& root);

  const std::string& trace_dir() const override { return trace_dir_; }
  Status MakeDir(const std::string& rel) override;
  Result<std::vector<DirEntry>> ListDir(const std::string& rel) override;
  Status CreateEmptyFile(const std::string& rel) override;
  Result<UniqueFd> OpenAppend(const std::string& rel) override;
  Status Write(int fd, std::span<const uint8_t> data) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status RemoveTree(const std::string& rel) override;
  Status RemoveEmptyDir(const std::string& rel) override;
  Result<uint64_t> TreeBytes(const std::string& rel) override;

 private:
  PosixFileSystem(std::string root, std::string trace_dir, UniqueFd dir_fd, dev_t dev, mode_t umask);

  // Opens the directory that contains the last component of `rel` (O_NOFOLLOW on every
  // step) and returns it with that last component. If the trace directory itself was
  // deleted, it is re-created first.
  struct Parent {
    UniqueFd fd;  // invalid means: the trace directory descriptor itself
    std::string leaf;
    int get(int base) const { return fd.valid() ? fd.get() : base; }
  };
  Result<Parent> OpenParent(const std::string& rel);
  Result<UniqueFd> OpenDir(const std::string& rel);
  Status FixMode(int dirfd, const std::string& name, mode_t wanted, bool is_dir);
  Status EnsureTraceDir();

  std::string root_;
  std::string trace_dir_;
  UniqueFd dir_fd_;
  dev_t dev_;
  mode_t umask_;
};

}  // namespace atraced
