// The store's only window on the disk (LevelDB's Env, narrowed to what the store needs).
// Every path is relative to the trace directory <root>/atrace, made of at most three
// '/'-separated components (process dir, event dir, file), each a plain name: no ".", "..",
// empty component or leading '/'. Implementations never follow a symlink in any component
// and never cross a mount, so nothing outside the trace directory is reached through one.
//
// Writes go through WritableFile (LevelDB's WritableFile): the file object counts its own
// bytes, so the layers above never hold a raw descriptor and never fstat to learn a size.
//
// Sizes come as DiskUsage, two figures: what the disk really gives the file (allocated
// blocks, which is what a byte budget protects) and its length (what `ls -l` shows). They
// differ for a sparse file, which a client holding a passed descriptor can make at will.
//
// Threading: one owner thread calls everything, except RemoveTree and RemoveEmptyDir, which
// the background remover (remover.h) also calls; implementations make those two safe to run
// beside the owner's calls.
//
// Tests swap in a fault-injecting wrapper (tests/support/fault_file_system.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/base/status.h"

namespace atraced {

struct DirEntry {
  enum class Type { kDirectory, kRegular, kOther };  // kOther: symlinks, sockets, ...
  std::string name;
  Type type = Type::kOther;
};

// The file system the trace directory is on (fstatvfs): its size, and what an unprivileged
// writer may still use (f_bavail; the daemon does not run as root, so the root-only reserve
// is not room for it).
struct FsSpace {
  uint64_t total = 0;
  uint64_t available = 0;
};

struct DiskUsage {
  uint64_t allocated = 0;  // st_blocks * 512: the disk really used
  uint64_t apparent = 0;   // st_size: a hole of 1 TiB counts here, not above
  DiskUsage& operator+=(const DiskUsage& o) {
    allocated += o.allocated;
    apparent += o.apparent;
    return *this;
  }
  bool operator==(const DiskUsage&) const = default;
  // What `now` holds beyond this, figure by figure; never negative (a shrunk file counts
  // nothing, and stays counted at its peak).
  DiskUsage GrowthTo(const DiskUsage& now) const {
    return {now.allocated > allocated ? now.allocated - allocated : 0,
            now.apparent > apparent ? now.apparent - apparent : 0};
  }
};

// A trace file the daemon no longer writes but a client may: its descriptor was passed and the
// daemon's own copy is closed. A read-only open of its own (a separate open file description),
// so it measures the file after its directory is aged and unlinked too. Destroying it closes
// it; for an unlinked file whose writers are gone that frees its blocks.
class FileWatch {
 public:
  virtual ~FileWatch() = default;
  // Both figures, from the file itself (fstat).
  virtual Result<DiskUsage> Usage() = 0;
  // Whether some other open file description may still write the file: a passed descriptor
  // its holder has not closed. A file system that cannot tell says no.
  virtual bool OpenForWriting() = 0;
};

// A trace file opened for appending. Destroying it closes the file.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes all of `data` at the end of the file, retrying short writes.
  virtual Status Append(std::span<const uint8_t> data) = 0;
  // The file's use when opened plus what Append wrote: its length grows by the bytes, its
  // allocation by the file system blocks they newly take (the daemon's own appends make no
  // holes, so this is what st_blocks says, and what a restart measures). A client writing
  // through a descriptor from Dup() is not seen until Refresh().
  virtual DiskUsage usage() const = 0;
  // The file's length as far as this object knows (replies report it as the file size).
  uint64_t size() const { return usage().apparent; }
  // Re-reads both figures from the file itself (fstat), for a file whose descriptor was
  // handed out: from then on only the file can say what it holds.
  virtual Result<DiskUsage> Refresh() = 0;
  // A new close-on-exec descriptor of the same open file, to pass to a client.
  virtual Result<UniqueFd> Dup() = 0;
  // A watch on this file that outlives this object (FileWatch).
  virtual Result<std::unique_ptr<FileWatch>> Watch() { return Status::Error(ENOTSUP, "no watch on this file"); }
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Absolute path of the trace directory, for messages and replies.
  virtual const std::string& trace_dir() const = 0;

  // Creates a directory with mode 0750 (whatever the umask). EEXIST is reported as such;
  // ENOENT means the parent is missing.
  virtual Status MakeDir(const std::string& rel) = 0;
  // Lists a directory ("" is the trace directory itself), without "." and "..".
  virtual Result<std::vector<DirEntry>> ListDir(const std::string& rel) = 0;
  // Opens a trace file O_WRONLY|O_APPEND, creating it with mode 0640, never truncating.
  // Refuses (EACCES) anything but a regular file with a single link, so a planted hard
  // link cannot make the daemon write into a file it did not create.
  virtual Result<std::unique_ptr<WritableFile>> OpenAppend(const std::string& rel) = 0;
  // Reads a whole small regular file; EFBIG if it holds more than `max_bytes`.
  virtual Result<std::string> ReadFile(const std::string& rel, size_t max_bytes) = 0;
  // Replaces a file's contents atomically (a temporary file renamed over it).
  virtual Status ReplaceFile(const std::string& rel, std::span<const uint8_t> data) = 0;
  // Removes a directory tree without following symlinks or crossing mounts. A missing
  // target is success. A symlink in place of the target is removed itself, never followed.
  virtual Status RemoveTree(const std::string& rel) = 0;
  // Removes a small event directory `rel` ("<process dir>/<event dir>") right away, as
  // CANN's own writer does before its save returns: true once it is gone (or not found: its
  // process directory may have been moved out of the trace directory, and is left alone).
  // false, having removed nothing or part of it, when it holds more than `max_entries`
  // entries or a subdirectory, or is not a plain directory beneath the trace directory (a
  // symlink, a file, another mount): RemoveTree's work, off the caller's path. Resolved
  // afresh beneath the trace directory by name, never through a kept descriptor or a
  // symlink, so it needs no check that a process directory is still in the tree.
  virtual Result<bool> RemoveSmallDir(const std::string& /*rel*/, size_t /*max_entries*/) { return false; }
  // rmdir(2): fails with ENOTEMPTY if anything is inside.
  virtual Status RemoveEmptyDir(const std::string& rel) = 0;
  // unlink(2) of a file (never a directory).
  virtual Status RemoveFile(const std::string& rel) = 0;
  // rename(2) of `from` to `to`, both inside the trace directory; never replaces anything
  // (EEXIST if `to` exists). A symlink at `from` is moved itself, never followed. Aging moves
  // a directory aside with it, so the count on disk is right before the delete is done.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Sum of the use of the regular files in a directory tree (both figures).
  virtual Result<DiskUsage> TreeBytes(const std::string& rel) = 0;
  // The size and free space of the trace directory's file system: one fstatvfs. The store
  // asks at most once per aging pass (see trace_store.h for when), never per append.
  virtual Result<FsSpace> Space() = 0;
  // Checks that <root>/atrace is still the directory held open (neither deleted nor
  // renamed away) and re-creates it if not. The default has nothing to check.
  virtual Status CheckTraceDir() { return Status::Ok(); }
  // Incremented each time the trace directory was found replaced and re-created.
  virtual uint64_t trace_dir_generation() const { return 0; }
  // A process directory (a top-level name) just made for `uid`: it, and everything made in
  // it afterwards, becomes readable by that uid, root and the reader group, nobody else
  // (read_grants.h). The default grants nothing.
  virtual Status GrantRead(const std::string& /*process_dir*/, uint32_t /*uid*/) { return Status::Ok(); }
  // Recovery: the same grant for a process directory and everything already in it. Returns
  // whether anything had to change (a tree of an older daemon, a reader group changed).
  virtual Result<bool> RepairGrant(const std::string& /*process_dir*/, uint32_t /*uid*/) { return false; }
  // What every grant here looks like, as one token for the order log's 'g' record: the
  // grant's form, the reader group, the daemon's uid. "" (the default) vouches for nothing.
  virtual std::string GrantStamp() const { return ""; }
  // Recovery under a log that vouches for this GrantStamp: RepairGrant only where the process
  // directory's metadata changed after its last entry did (an ACL, mode or owner changed by
  // someone since: its ctime is past its mtime); elsewhere one stat, no ACL read.
  virtual Result<bool> RecheckGrant(const std::string& process_dir, uint32_t uid) {
    return RepairGrant(process_dir, uid);
  }
};

}  // namespace atraced
