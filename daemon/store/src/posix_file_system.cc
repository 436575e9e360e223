#include "atraced/store/posix_file_system.h"

#include <dirent.h>
#include <sys/types.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>  // renameat2
#include <cstddef>
#include <cstring>
#include <vector>

#include "posix_walk.h"
#include "read_grants.h"

namespace atraced {

using namespace posix;  // the walks this file system is made of (posix_walk.h)

namespace {

// Both figures of an open file, from fstat.
Result<DiskUsage> StatUsage(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    return Errno(err, "stat " + path);
  }
  return UsageOf(st);
}

// The blocks a dense file of `bytes` takes: what st_blocks will say once it is written.
uint64_t BlocksFor(uint64_t bytes, uint64_t block) { return (bytes + block - 1) / block * block; }

class PosixWritableFile final : public WritableFile {
 public:
  // `block`: the file system's allocation unit (the trace directory's st_blksize).
  PosixWritableFile(UniqueFd fd, DiskUsage usage, std::string path, uint64_t block)
      : fd_(std::move(fd)), usage_(usage), path_(std::move(path)), block_(block ? block : 1) {}

  Status Append(std::span<const uint8_t> data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_.get(), data.data(), data.size());
      if (n < 0) {
        int err = errno;
        if (err == EINTR) continue;
        return Errno(err, "write " + path_);
      }
      if (n == 0) return Status::Error(EIO, "write " + path_ + " returned 0");
      // An append makes no hole: its bytes take the blocks past the old end, counted in
      // whole blocks from the first byte, as the disk and a restart's walk count them.
      const uint64_t end = usage_.apparent + static_cast<uint64_t>(n);
      usage_.allocated += BlocksFor(end, block_) - BlocksFor(usage_.apparent, block_);
      usage_.apparent = end;
      data = data.subspan(static_cast<size_t>(n));
    }
    return Status::Ok();
  }
  DiskUsage usage() const override { return usage_; }
  Result<DiskUsage> Refresh() override {
    auto now = StatUsage(fd_.get(), path_);
    if (now.ok()) usage_ = *now;
    return now;
  }
  Result<UniqueFd> Dup() override {
    UniqueFd dup(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
    if (!dup.valid()) {
      int err = errno;
      return Errno(err, "dup " + path_);
    }
    return dup;
  }
  Result<std::unique_ptr<FileWatch>> Watch() override;

 private:
  UniqueFd fd_;
  DiskUsage usage_;
  std::string path_;
  uint64_t block_;
};

// A read-only open of a passed file of its own. Whether anyone else writes it is asked of
// the kernel with a read lease: one is refused (EAGAIN) exactly while the inode is open for
// writing by any open file description, and this one is read-only. The daemon owns every
// trace file, which a lease requires.
class PosixFileWatch final : public FileWatch {
 public:
  PosixFileWatch(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  Result<DiskUsage> Usage() override { return StatUsage(fd_.get(), path_); }
  bool OpenForWriting() override {
    if (::fcntl(fd_.get(), F_SETLEASE, F_RDLCK) == 0) {
      (void)::fcntl(fd_.get(), F_SETLEASE, F_UNLCK);
      return false;
    }
    return errno == EAGAIN;  // anything else (leases off, a file system without them): cannot tell
  }

 private:
  UniqueFd fd_;
  std::string path_;
};

Result<std::unique_ptr<FileWatch>> PosixWritableFile::Watch() {
  // Through /proc/self/fd: the same inode whatever became of its name.
  const std::string self = "/proc/self/fd/" + std::to_string(fd_.get());
  UniqueFd ro(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!ro.valid()) {
    int err = errno;
    return Errno(err, "reopen " + path_ + " to watch it");
  }
  return std::unique_ptr<FileWatch>(new PosixFileWatch(std::move(ro), path_));
}

}  // namespace

PosixFileSystem::PosixFileSystem(std::string root, std::string trace_dir, mode_t umask, std::optional<gid_t> reader_gid)
    : root_(std::move(root)), trace_dir_(std::move(trace_dir)), umask_(umask),
      grants_(std::make_unique<ReadGrants>(reader_gid)) {}

PosixFileSystem::~PosixFileSystem() = default;

std::string PosixFileSystem::TraceDirFor(const std::string& root) {
  size_t end = root.find_last_not_of('/');
  return (end == std::string::npos ? "" : root.substr(0, end + 1)) + "/atrace";
}

Result<std::unique_ptr<PosixFileSystem>> PosixFileSystem::Open(const std::string& root, std::optional<gid_t> reader_gid) {
  if (root.empty() || root[0] != '/') return Status::Error(EINVAL, "trace root must be absolute: [" + root + "]");
  // Read the umask once: it decides whether new entries need an explicit chmod.
  mode_t mask = ::umask(0);
  ::umask(mask);
  auto fs = std::unique_ptr<PosixFileSystem>(new PosixFileSystem(root, TraceDirFor(root), mask, reader_gid));
  if (Status st = fs->EnsureTraceDir(); !st.ok()) return st;
  return fs;
}

// Only the owner thread replaces dir_, so the owner reads it without the lock; the remover
// thread takes the lock to copy it (and so keeps an old descriptor alive while it works).
const std::shared_ptr<const UniqueFd>& PosixFileSystem::OwnerDirFd() const { return dir_; }

std::shared_ptr<const UniqueFd> PosixFileSystem::TraceDirFd() const {
  std::lock_guard<std::mutex> lock(dir_mu_);
  return dir_;
}

Status PosixFileSystem::EnsureTraceDir() {
  if (auto current = OwnerDirFd()) {
    // A deleted directory still has a descriptor, with no links; a renamed one is still
    // linked, but no longer under its name. Either way re-create it: the path must name the
    // directory held open.
    struct stat held {}, named {};
    if (::fstat(current->get(), &held) == 0 && held.st_nlink > 0 && ::lstat(trace_dir_.c_str(), &named) == 0 &&
        named.st_dev == held.st_dev && named.st_ino == held.st_ino) {
      return Status::Ok();
    }
    ++generation_;
  }
  UniqueFd rootfd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!rootfd.valid()) {
    int err = errno;
    return Errno(err, "open trace root " + root_);
  }
  if (::mkdirat(rootfd.get(), "atrace", kDirMode) != 0 && errno != EEXIST) {
    int err = errno;
    return Errno(err, "mkdir " + trace_dir_);
  }
  UniqueFd fd(::openat(rootfd.get(), "atrace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    return Errno(err, "open " + trace_dir_);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    int err = errno;
    return Errno(err, "stat " + trace_dir_);
  }
  // Its mode and ACL: who may reach and read what is below it (read_grants.h).
  if (Status set = grants_->SetUpTraceDir(rootfd.get(), fd.get(), trace_dir_); !set.ok()) return set;
  dev_ = st.st_dev;
  block_ = static_cast<uint64_t>(st.st_blksize);
  cache_.clear();  // descriptors of the old tree's process dirs
  lru_.clear();
  std::lock_guard<std::mutex> lock(dir_mu_);
  dir_ = std::make_shared<const UniqueFd>(std::move(fd));
  return Status::Ok();
}

int PosixFileSystem::OpenBeneath(int base, std::string_view rest, int flags, mode_t mode) {
  return OpenBeneathAt(base, rest, flags, mode);
}

Status PosixFileSystem::OpenRegular(int base, std::string_view rest, int flags, const std::string& shown, UniqueFd* fd,
                                    struct stat* st) {
  fd->reset(OpenBeneath(base, rest, flags | O_NONBLOCK, 0));  // a planted FIFO must not block the open
  if (!fd->valid()) {
    int err = errno;
    return Errno(err, "open " + shown);
  }
  if (::fstat(fd->get(), st) != 0) {
    int err = errno;
    return Errno(err, "stat " + shown);
  }
  if (!S_ISREG(st->st_mode)) return Status::Error(EACCES, shown + " is not a regular file");
  return Status::Ok();
}

Result<int> PosixFileSystem::ProcessDirFd(std::string_view name) {
  if (auto it = cache_.find(name); it != cache_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.pos);
    return it->second.fd.get();
  }
  auto dir = OwnerDirFd();
  UniqueFd fd(OpenBeneath(dir->get(), name, O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
  if (!fd.valid()) {
    int err = errno;
    return Errno(err, "open " + trace_dir_ + "/" + std::string(name));
  }
  if (cache_.size() >= kDirCacheSize) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    int err = errno;
    return Errno(err, "stat " + trace_dir_ + "/" + std::string(name));
  }
  lru_.emplace_front(name);
  int raw = fd.get();
  cache_.emplace(lru_.front(), Cached{std::move(fd), lru_.begin(), st.st_dev, st.st_ino});
  return raw;
}

bool PosixFileSystem::StillNamed(std::string_view name) {
  auto it = cache_.find(name);
  char path[NAME_MAX + 1];
  if (it == cache_.end() || name.size() > NAME_MAX) return false;
  std::memcpy(path, name.data(), name.size());
  path[name.size()] = '\0';
  struct stat st {};
  return ::fstatat(OwnerDirFd()->get(), path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
         st.st_dev == it->second.dev && st.st_ino == it->second.ino;
}

void PosixFileSystem::Forget(std::string_view name) {
  auto it = cache_.find(name);
  if (it == cache_.end()) return;
  lru_.erase(it->second.pos);
  cache_.erase(it);
}

Result<PosixFileSystem::Anchor> PosixFileSystem::AnchorFor(const std::string& rel) {
  if (Status st = CheckRelative(rel); !st.ok()) return st;
  const size_t slash = rel.find('/');
  if (slash == std::string::npos) return Anchor{OwnerDirFd()->get(), rel, {}};
  const std::string_view proc = std::string_view(rel).substr(0, slash);
  auto fd = ProcessDirFd(proc);
  if (!fd.ok()) return fd.status();
  return Anchor{*fd, std::string_view(rel).substr(slash + 1), proc};
}

Status PosixFileSystem::FixMode(int fd, mode_t wanted) {
  struct stat st {};
  // Keep a setgid bit inherited from the parent directory.
  if (::fstat(fd, &st) != 0 || ::fchmod(fd, (st.st_mode & 07000) | wanted) != 0) {
    int err = errno;
    return Errno(err, "chmod");
  }
  return Status::Ok();
}

Status PosixFileSystem::MakeDir(const std::string& rel) {
  const bool strips = (kDirMode & ~umask_) != kDirMode;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto anchor = AnchorFor(rel);
    if (!anchor.ok()) return anchor.status();
    // The leaf is the tail of `rel`, so leaf.data() is NUL-terminated.
    const size_t slash = anchor->rest.rfind('/');
    const std::string_view parent = slash == std::string_view::npos ? std::string_view() : anchor->rest.substr(0, slash);
    const std::string_view leaf = slash == std::string_view::npos ? anchor->rest : anchor->rest.substr(slash + 1);
    int at = anchor->fd;
    UniqueFd parent_fd;
    if (!parent.empty()) {  // deeper than the anchor: resolve the parent safely first
      parent_fd.reset(OpenBeneath(at, parent, O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
      if (!parent_fd.valid()) {
        int err = errno;
        return Errno(err, "mkdir " + trace_dir_ + "/" + rel);
      }
      at = parent_fd.get();
    }
    if (::mkdirat(at, leaf.data(), kDirMode) == 0) {
      if (!strips) return Status::Ok();
      UniqueFd made(::openat(at, leaf.data(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!made.valid()) {
        int err = errno;
        return Errno(err, "open " + trace_dir_ + "/" + rel);
      }
      return FixMode(made.get(), kDirMode);
    }
    int err = errno;
    // ENOENT from a cached descriptor or the trace directory: the directory it names was
    // removed under us. Resolve again once; a second ENOENT is the caller's (parent missing).
    if (err == ENOENT && attempt == 0) {
      if (!anchor->cached.empty()) {
        Forget(anchor->cached);
        continue;
      }
      if (Status st = EnsureTraceDir(); st.ok()) continue;
    }
    return Errno(err, "mkdir " + trace_dir_ + "/" + rel);
  }
  return Status::Error(ENOENT, "mkdir " + trace_dir_ + "/" + rel + ": parent missing");
}

Result<std::vector<DirEntry>> PosixFileSystem::ListDir(const std::string& rel) {
  // Only a listing of the trace directory itself checks that the path still names it:
  // recovery lists every process directory right after, through the same descriptor.
  if (rel.empty()) {
    if (Status st = EnsureTraceDir(); !st.ok()) return st;
  }
  auto dir = OwnerDirFd();
  UniqueFd fd(rel.empty() ? ::openat(dir->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                          : OpenBeneath(dir->get(), rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
  if (!fd.valid()) {
    int err = errno;
    return Errno(err, "open " + trace_dir_ + (rel.empty() ? "" : "/" + rel));
  }
  return ReadEntries(fd.get(), trace_dir_ + "/" + rel);
}

Result<std::unique_ptr<WritableFile>> PosixFileSystem::OpenAppend(const std::string& rel) {
  // Kept by the file for its error messages: built with one allocation, then moved into it.
  std::string path;
  path.reserve(trace_dir_.size() + 1 + rel.size());
  path.append(trace_dir_).append("/").append(rel);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto anchor = AnchorFor(rel);
    if (!anchor.ok()) return anchor.status();
    // Nearly always the file is new (one file per object per event): create it exclusively,
    // which needs no check afterwards — nothing planted can be behind a name we just made.
    UniqueFd fd(OpenBeneath(anchor->fd, anchor->rest, O_CREAT | O_EXCL | O_WRONLY | O_APPEND | O_CLOEXEC, kFileMode));
    if (fd.valid()) {
      if ((kFileMode & ~umask_) != kFileMode) {
        if (Status st = FixMode(fd.get(), kFileMode); !st.ok()) return st;
      }
      return std::unique_ptr<WritableFile>(new PosixWritableFile(std::move(fd), {}, std::move(path), block_));
    }
    int err = errno;
    if (err == ENOENT && attempt == 0 && !anchor->cached.empty()) {
      Forget(anchor->cached);
      continue;
    }
    if (err != EEXIST) return Errno(err, "open " + path);
    // It exists: append to it, but only if it is a regular file with one link.
    struct stat st {};
    if (Status open = OpenRegular(anchor->fd, anchor->rest, O_WRONLY | O_APPEND | O_CLOEXEC, path, &fd, &st); !open.ok()) {
      return open;
    }
    if (st.st_nlink != 1) return Status::Error(EACCES, path + " has " + std::to_string(st.st_nlink) + " links");
    if ((st.st_mode & 07777) != kFileMode && ::fchmod(fd.get(), kFileMode) != 0) {
      int cerr = errno;
      return Errno(cerr, "chmod " + path);
    }
    int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
      int ferr = errno;
      return Errno(ferr, "fcntl " + path);
    }
    return std::unique_ptr<WritableFile>(new PosixWritableFile(std::move(fd), UsageOf(st), std::move(path), block_));
  }
  return Status::Error(ENOENT, "open " + path + ": parent missing");
}

Result<std::string> PosixFileSystem::ReadFile(const std::string& rel, size_t max_bytes) {
  const std::string path = trace_dir_ + "/" + rel;
  auto dir = OwnerDirFd();
  UniqueFd fd;
  struct stat st {};
  if (Status open = OpenRegular(dir->get(), rel, O_RDONLY | O_CLOEXEC, path, &fd, &st); !open.ok()) return open;
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Status::Error(EFBIG, path + " holds " + std::to_string(st.st_size) + " bytes, more than " +
                                    std::to_string(max_bytes));
  }
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      return Errno(err, "read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) return Status::Error(EFBIG, path + " grew past " + std::to_string(max_bytes) + " bytes");
  }
  return out;
}

Status PosixFileSystem::ReplaceFile(const std::string& rel, std::span<const uint8_t> data) {
  if (rel.find('/') != std::string::npos) return Status::Error(EINVAL, "ReplaceFile: only files of the trace directory");
  if (Status st = EnsureTraceDir(); !st.ok()) return st;
  auto dir = OwnerDirFd();
  const std::string tmp = rel + ".tmp";
  const std::string path = trace_dir_ + "/" + rel;
  if (::unlinkat(dir->get(), tmp.c_str(), 0) != 0 && errno != ENOENT) {
    int err = errno;
    return Errno(err, "unlink " + trace_dir_ + "/" + tmp);
  }
  UniqueFd fd(::openat(dir->get(), tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, kFileMode));
  if (!fd.valid()) {
    int err = errno;
    return Errno(err, "create " + trace_dir_ + "/" + tmp);
  }
  PosixWritableFile file(std::move(fd), {}, trace_dir_ + "/" + tmp, block_);
  if (Status st = file.Append(data); !st.ok()) return st;
  // The rename must not publish an empty file after a power cut.
  auto copy = file.Dup();
  if (!copy.ok()) return copy.status();
  if (::fdatasync(copy->get()) != 0) {
    int err = errno;
    return Errno(err, "fdatasync " + trace_dir_ + "/" + tmp);
  }
  if (::renameat(dir->get(), tmp.c_str(), dir->get(), rel.c_str()) != 0) {
    int err = errno;
    return Errno(err, "rename " + trace_dir_ + "/" + tmp + " to " + path);
  }
  return Status::Ok();
}

// Resolves the parent of `rel` below the trace directory (for the remover thread: through a
// snapshot of the trace directory's descriptor, never the owner's cache). *at is the
// descriptor to use with *leaf; it is `dir` itself for a top-level name. Views into `rel`,
// not copies: the remover runs this once per aged directory.
Status PosixFileSystem::OpenParentDir(const std::string& rel, const UniqueFd& dir, UniqueFd* parent_fd, int* at,
                                      const char** leaf) {
  if (Status st = CheckRelative(rel); !st.ok()) return st;
  const size_t slash = rel.rfind('/');
  *leaf = rel.c_str() + (slash == std::string::npos ? 0 : slash + 1);
  *at = dir.get();
  if (slash == std::string::npos) return Status::Ok();
  const std::string_view parent = std::string_view(rel).substr(0, slash);
  parent_fd->reset(OpenBeneath(dir.get(), parent, O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
  if (!parent_fd->valid()) {
    int err = errno;
    return Errno(err, "open " + trace_dir_ + "/" + std::string(parent));
  }
  *at = parent_fd->get();
  return Status::Ok();
}

Status PosixFileSystem::RemoveTree(const std::string& rel) {
  auto dir = TraceDirFd();
  std::string shown;  // for messages; one allocation per aged directory
  shown.reserve(trace_dir_.size() + 1 + rel.size());
  shown.append(trace_dir_).append("/").append(rel);
  // The parent kept from the last call, if it is this one's (see parent_fd_). If the
  // directory is not found there, that descriptor may be stale (its directory was removed and
  // made again), so the parent is resolved afresh, as it always is without a kept one.
  const size_t slash = rel.rfind('/');
  if (slash != std::string::npos && CheckRelative(rel).ok()) {
    const std::string_view parent_name = std::string_view(rel).substr(0, slash);
    if (UniqueFd kept = TakeParent(dir, parent_name); kept.valid()) {
      bool absent = false;
      Status st = RemoveAt(kept.get(), rel.c_str() + slash + 1, shown, dev_, 0, &absent);
      if (!absent) {
        KeepParent(std::move(dir), parent_name, std::move(kept));
        return st;
      }
    }
  }
  UniqueFd parent;
  int at = -1;
  const char* leaf = nullptr;
  if (Status st = OpenParentDir(rel, *dir, &parent, &at, &leaf); !st.ok()) {
    // The path no longer leads into our tree (the parent vanished, or was replaced by a
    // symlink or a file): nothing of ours is there to remove.
    int err = st.err();
    if (err == ENOENT || err == ELOOP || err == ENOTDIR || err == EXDEV) return Status::Ok();
    return st;
  }
  Status st = RemoveAt(at, leaf, shown, dev_, 0);
  if (parent.valid()) KeepParent(std::move(dir), std::string_view(rel).substr(0, slash), std::move(parent));
  return st;
}

Result<bool> PosixFileSystem::RemoveSmallDir(const std::string& rel, size_t max_entries) {
  return RemoveSmallAt(OwnerDirFd()->get(), rel, max_entries, dev_, trace_dir_ + "/" + rel);
}

UniqueFd PosixFileSystem::TakeParent(const std::shared_ptr<const UniqueFd>& base, std::string_view name) {
  std::lock_guard<std::mutex> lock(parent_mu_);
  if (parent_base_ != base || parent_name_ != name) return UniqueFd();
  return std::move(parent_fd_);
}

void PosixFileSystem::KeepParent(std::shared_ptr<const UniqueFd> base, std::string_view name, UniqueFd fd) {
  std::lock_guard<std::mutex> lock(parent_mu_);
  parent_base_ = std::move(base);
  parent_name_.assign(name);
  parent_fd_ = std::move(fd);
}

Status PosixFileSystem::RemoveFile(const std::string& rel) {
  auto dir = TraceDirFd();
  UniqueFd parent;
  int at = -1;
  const char* leaf = nullptr;
  if (Status st = OpenParentDir(rel, *dir, &parent, &at, &leaf); !st.ok()) return st;
  if (::unlinkat(at, leaf, 0) != 0) {
    int err = errno;
    return Errno(err, "unlink " + trace_dir_ + "/" + rel);
  }
  return Status::Ok();
}

Status PosixFileSystem::RemoveEmptyDir(const std::string& rel) {
  auto dir = TraceDirFd();
  UniqueFd parent;
  int at = -1;
  const char* leaf = nullptr;
  if (Status st = OpenParentDir(rel, *dir, &parent, &at, &leaf); !st.ok()) return st;
  if (::unlinkat(at, leaf, AT_REMOVEDIR) != 0) {
    int err = errno;
    return Errno(err, "rmdir " + trace_dir_ + "/" + rel);
  }
  // A process directory RemoveTree keeps open is gone now: do not try it next time.
  std::lock_guard<std::mutex> lock(parent_mu_);
  if (parent_name_ == rel) parent_fd_.reset();
  return Status::Ok();
}

Status PosixFileSystem::Rename(const std::string& from, const std::string& to) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto a = AnchorFor(from);
    if (!a.ok()) return a.status();
    // A cached descriptor follows its directory wherever it is moved: before taking anything
    // out of it, check that it is still in the tree, so nothing outside is ever moved in
    // (and then deleted). Resolved afresh if not, which refuses a symlink (ELOOP).
    if (!a->cached.empty() && !StillNamed(a->cached)) {
      Forget(a->cached);
      if (attempt == 0) continue;
      return Status::Error(ENOENT, "rename " + trace_dir_ + "/" + from + ": its directory left the trace directory");
    }
    auto b = AnchorFor(to);
    if (!b.ok()) return b.status();
    // Each side's leaf is the tail of its path (NUL-terminated); a deeper parent is resolved
    // beneath its anchor first, as MakeDir does.
    UniqueFd parents[2];
    int at[2] = {a->fd, b->fd};
    const char* leaf[2] = {nullptr, nullptr};
    const std::string_view rests[2] = {a->rest, b->rest};
    for (int i = 0; i < 2; ++i) {
      const size_t slash = rests[i].rfind('/');
      leaf[i] = rests[i].data() + (slash == std::string_view::npos ? 0 : slash + 1);
      if (slash == std::string_view::npos) continue;
      parents[i].reset(OpenBeneath(at[i], rests[i].substr(0, slash), O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
      if (!parents[i].valid()) {
        int err = errno;
        return Errno(err, "rename " + trace_dir_ + "/" + from + " to " + to);
      }
      at[i] = parents[i].get();
    }
    if (::renameat2(at[0], leaf[0], at[1], leaf[1], RENAME_NOREPLACE) == 0) return Status::Ok();
    int err = errno;
    // ENOENT through a cached descriptor: its directory was removed and made again.
    if (err == ENOENT && attempt == 0 && (!a->cached.empty() || !b->cached.empty())) {
      Forget(a->cached);  // views into `from` and `to`, not into the cache
      Forget(b->cached);
      continue;
    }
    return Errno(err, "rename " + trace_dir_ + "/" + from + " to " + trace_dir_ + "/" + to);
  }
  return Status::Error(ENOENT, "rename " + trace_dir_ + "/" + from + ": not found");
}

Result<DiskUsage> PosixFileSystem::TreeBytes(const std::string& rel) {
  auto dir = OwnerDirFd();
  UniqueFd fd(OpenBeneath(dir->get(), rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
  if (!fd.valid()) {
    int err = errno;
    return Errno(err, "open " + trace_dir_ + "/" + rel);
  }
  return SumAt(fd.get(), trace_dir_ + "/" + rel, dev_, 0);
}

Result<FsSpace> PosixFileSystem::Space() {
  struct statvfs v {};
  if (::fstatvfs(OwnerDirFd()->get(), &v) != 0) {
    int err = errno;
    return Errno(err, "statvfs " + trace_dir_);
  }
  // No block count (ramfs): no free space to keep; only a max-use in bytes bounds it.
  if (v.f_blocks == 0) return FsSpace{0, UINT64_MAX / 4};
  return FsSpace{static_cast<uint64_t>(v.f_blocks) * v.f_frsize, static_cast<uint64_t>(v.f_bavail) * v.f_frsize};
}

}  // namespace atraced
