// FileSystem on the real disk.
//
// Every path is resolved relative to a descriptor, never from "/": the trace directory's,
// or a cached descriptor of a process directory. Multi-component paths are resolved by the
// kernel in one openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV, so a
// symlink planted anywhere below the trace directory is never followed and no mount is
// crossed; where openat2 is missing (old kernel, a seccomp filter) the same guarantees come
// from a walk one component at a time with O_NOFOLLOW and an st_dev check.
//
// Process directories are where every event is created, so their descriptors (O_PATH) are
// kept in a small LRU cache: creating an event dir is one mkdirat(2), opening a trace file
// one openat2(2). A cached descriptor whose directory was removed is noticed by the ENOENT
// of the next call, dropped, and the path resolved again.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "atraced/store/file_system.h"

namespace atraced {
namespace posix {
class ReadGrants;
}  // namespace posix

class PosixFileSystem final : public FileSystem {
 public:
  // Creates <root>/atrace (0750) if needed and opens it. `root` must be absolute. What is
  // written below it is readable by the uid it is made for, root and `reader_gid`
  // (ReadGrants, read_grants.h); the file system is asked here, once, whether it takes ACLs.
  static Result<std::unique_ptr<PosixFileSystem>> Open(const std::string& root,
                                                       std::optional<gid_t> reader_gid = std::nullopt);
  ~PosixFileSystem() override;
  // <root>/atrace without a doubled slash: "/" gives "/atrace", "/r/" gives "/r/atrace".
  static std::string TraceDirFor(const std::string& root);

  const std::string& trace_dir() const override { return trace_dir_; }
  Status MakeDir(const std::string& rel) override;
  Result<std::vector<DirEntry>> ListDir(const std::string& rel) override;
  Result<std::unique_ptr<WritableFile>> OpenAppend(const std::string& rel) override;
  Result<std::string> ReadFile(const std::string& rel, size_t max_bytes) override;
  Status ReplaceFile(const std::string& rel, std::span<const uint8_t> data) override;
  Status RemoveTree(const std::string& rel) override;
  // One openat2, one getdents64, an unlinkat per file and one for the directory, one close.
  Result<bool> RemoveSmallDir(const std::string& rel, size_t max_entries) override;
  Status RemoveEmptyDir(const std::string& rel) override;
  Status RemoveFile(const std::string& rel) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Result<DiskUsage> TreeBytes(const std::string& rel) override;
  Result<FsSpace> Space() override;
  Status CheckTraceDir() override { return EnsureTraceDir(); }
  Status GrantRead(const std::string& process_dir, uint32_t uid) override;
  Result<bool> RepairGrant(const std::string& process_dir, uint32_t uid) override;
  std::string GrantStamp() const override;
  Result<bool> RecheckGrant(const std::string& process_dir, uint32_t uid) override;
  // Set when the trace directory's file system takes no ACLs: the one warning the daemon logs
  // at start (what falls back), "" otherwise.
  const std::string& no_acl_warning() const;
  uint64_t trace_dir_generation() const override { return generation_; }

  // How many process-directory descriptors are kept open at most.
  static constexpr size_t kDirCacheSize = 256;

 private:
  PosixFileSystem(std::string root, std::string trace_dir, mode_t umask, std::optional<gid_t> reader_gid);
  // GrantRead and RepairGrant's process directory, opened for reading beneath the trace
  // directory (never through a symlink).
  Result<UniqueFd> OpenProcessDir(const std::string& process_dir);

  // Where a relative path starts: a descriptor and the rest of the path below it. Both
  // views point into the path given to AnchorFor (no copy on the event path); `rest` is its
  // tail, so it is NUL-terminated like the path itself.
  struct Anchor {
    int fd = -1;
    std::string_view rest;
    std::string_view cached;  // the process dir whose cached descriptor `fd` is, or ""
  };
  Result<Anchor> AnchorFor(const std::string& rel);
  Result<int> ProcessDirFd(std::string_view name);
  // *leaf is the tail of `rel` (NUL-terminated); *at the descriptor to use it with.
  Status OpenParentDir(const std::string& rel, const UniqueFd& dir, UniqueFd* parent_fd, int* at, const char** leaf);
  // Opens an existing regular file below `base` (never a FIFO, a device or a directory).
  Status OpenRegular(int base, std::string_view rest, int flags, const std::string& shown, UniqueFd* fd,
                     struct stat* st);
  void Forget(std::string_view name);
  // Whether the cached process dir `name` is still the directory the trace directory has
  // under that name (not moved out of the tree, not swapped for a symlink): one fstatat.
  bool StillNamed(std::string_view name);
  // openat2 beneath `base`, or the O_NOFOLLOW walk where openat2 is unavailable.
  int OpenBeneath(int base, std::string_view rest, int flags, mode_t mode);
  // The trace directory's descriptor: the owner's view, and a locked copy for the remover.
  const std::shared_ptr<const UniqueFd>& OwnerDirFd() const;
  std::shared_ptr<const UniqueFd> TraceDirFd() const;
  Status EnsureTraceDir();
  // RemoveTree's kept parent: taken out (so two threads never share it) and put back.
  UniqueFd TakeParent(const std::shared_ptr<const UniqueFd>& base, std::string_view name);
  void KeepParent(std::shared_ptr<const UniqueFd> base, std::string_view name, UniqueFd fd);
  Status FixMode(int fd, mode_t wanted);

  std::string root_;
  std::string trace_dir_;
  mode_t umask_;
  std::atomic<dev_t> dev_{0};  // read by the remover thread
  uint64_t block_ = 4096;      // st_blksize of the trace directory: files grow by it
  mutable std::mutex dir_mu_;  // guards the pointer, not the descriptor
  std::shared_ptr<const UniqueFd> dir_;
  uint64_t generation_ = 0;  // owner thread only
  std::unique_ptr<posix::ReadGrants> grants_;  // owner thread only

  // The parent (a process directory) of the last directory RemoveTree removed, and the trace
  // directory's descriptor it was resolved beneath. Aged directories come oldest first, so
  // runs of them share a process directory: one O_PATH open serves the run, instead of an
  // openat2 and a close per aged directory. RemoveTree runs on the remover thread (or on the
  // owner's when the remover's queue is full): hence the lock.
  std::mutex parent_mu_;
  std::shared_ptr<const UniqueFd> parent_base_;
  std::string parent_name_;
  UniqueFd parent_fd_;

  // LRU of process-dir descriptors (owner thread only).
  std::list<std::string> lru_;
  struct Cached {
    UniqueFd fd;
    std::list<std::string>::iterator pos;
    dev_t dev = 0;  // what it was opened on, for StillNamed
    ino_t ino = 0;
  };
  // Looked up by string_view (a prefix of the request's path) without building a key.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Cached, NameHash, std::equal_to<>> cache_;
};

}  // namespace atraced
