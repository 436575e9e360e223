// The store's only window on the disk (LevelDB's Env, narrowed to what the store needs).
// Every path is relative to the trace directory <root>/atrace, made of at most three
// '/'-separated components (process dir, event dir, file), each a plain name: no ".", "..",
// empty component or leading '/'. Implementations never follow a symlink in any component,
// so nothing outside the trace directory is reached through one.
//
// Tests swap in a fault-injecting wrapper (tests/support/fault_file_system.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "atraced/core/status.h"
#include "atraced/proto/unique_fd.h"

namespace atraced {

struct DirEntry {
  enum class Type { kDirectory, kRegular, kOther };  // kOther: symlinks, sockets, ...
  std::string name;
  Type type = Type::kOther;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Absolute path of the trace directory, for messages and replies.
  virtual const std::string& trace_dir() const = 0;

  // Creates a directory with mode 0750 (whatever the umask). EEXIST is reported as such.
  virtual Status MakeDir(const std::string& rel) = 0;
  // Lists a directory ("" is the trace directory itself), without "." and "..".
  virtual Result<std::vector<DirEntry>> ListDir(const std::string& rel) = 0;
  // Creates an empty file, mode 0640; fails with EEXIST if anything is there.
  virtual Status CreateEmptyFile(const std::string& rel) = 0;
  // Opens a trace file O_CREAT|O_WRONLY|O_APPEND|O_CLOEXEC|O_NOFOLLOW, mode 0640, never
  // truncating. Refuses (EACCES) anything but a regular file with a single link, so a
  // planted hard link cannot make the daemon write into a file it did not create.
  virtual Result<UniqueFd> OpenAppend(const std::string& rel) = 0;
  // Writes all of `data` to `fd` (a descriptor from OpenAppend), retrying short writes.
  virtual Status Write(int fd, std::span<const uint8_t> data) = 0;
  // Renames within one parent; fails with EEXIST instead of replacing an existing target.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Removes a directory tree without following symlinks or crossing mounts. A missing
  // target is success. A symlink in place of the target is removed itself, never followed.
  virtual Status RemoveTree(const std::string& rel) = 0;
  // rmdir(2): fails with ENOTEMPTY if anything is inside.
  virtual Status RemoveEmptyDir(const std::string& rel) = 0;
  // Sum of the sizes of the regular files in a directory tree.
  virtual Result<uint64_t> TreeBytes(const std::string& rel) = 0;
};

}  // namespace atraced
