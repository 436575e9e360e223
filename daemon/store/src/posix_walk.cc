// The descriptor-relative walks under the trace directory that PosixFileSystem is made of:
// path checks, opening beneath a directory (openat2, or one O_NOFOLLOW component at a time),
// reading a directory's entries, and the recursive remove and size of a tree.
#include "posix_walk.h"

#include <dirent.h>
#include <sys/types.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstring>
#include <vector>

namespace atraced::posix {

namespace {

constexpr int kMaxComponents = 3;
constexpr int kMaxRemoveDepth = 32;  // far deeper than the layout; stops pathological trees
constexpr uint64_t kResolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;

}  // namespace

Status Errno(int err, const std::string& what) { return Status::Error(err, ErrnoMessage(what, err)); }

Status CheckRelative(std::string_view rel) {
  size_t components = 0;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    std::string_view part = rel.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string_view::npos) {
      return Status::Error(EINVAL, "bad path component in [" + std::string(rel) + "]");
    }
    ++components;
    start = end + 1;
  }
  if (components > kMaxComponents) return Status::Error(EINVAL, "path too deep: [" + std::string(rel) + "]");
  return Status::Ok();
}

namespace {

// Splits "a/b/c" into components, after CheckRelative (only the O_NOFOLLOW walk needs the parts).
Result<std::vector<std::string>> SplitRelative(const std::string& rel) {
  if (Status st = CheckRelative(rel); !st.ok()) return st;
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end; (end = rel.find('/', start)) != std::string::npos; start = end + 1) {
    parts.emplace_back(rel, start, end - start);
  }
  parts.emplace_back(rel, start);
  return parts;
}

// Set once openat2 is found missing or filtered; from then on the walk is used.
std::atomic<bool> g_no_openat2{false};


// Resolves `rest` below `base` one component at a time, refusing symlinks and mounts.
int WalkBeneath(int base, const std::string& rest, int flags, mode_t mode) {
  auto parts = SplitRelative(rest);
  if (!parts.ok()) {
    errno = EINVAL;
    return -1;
  }
  struct stat base_st {};
  if (::fstat(base, &base_st) != 0) return -1;
  UniqueFd dir;
  int at = base;
  for (size_t i = 0; i + 1 < parts->size(); ++i) {
    UniqueFd next(::openat(at, (*parts)[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return -1;
    struct stat st {};
    if (::fstat(next.get(), &st) != 0) return -1;
    if (st.st_dev != base_st.st_dev) {
      errno = EXDEV;
      return -1;
    }
    dir = std::move(next);
    at = dir.get();
  }
  return ::openat(at, parts->back().c_str(), flags | O_NOFOLLOW, mode);
}

}  // namespace

DiskUsage UsageOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_blocks) * 512, static_cast<uint64_t>(st.st_size)};
}

namespace {

DirEntry::Type TypeOf(int dirfd, const char* name, unsigned char t) {
  if (t == DT_UNKNOWN) {  // some filesystems do not fill d_type
    struct stat st {};
    if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return DirEntry::Type::kOther;
    if (S_ISDIR(st.st_mode)) return DirEntry::Type::kDirectory;
    if (S_ISREG(st.st_mode)) return DirEntry::Type::kRegular;
    return DirEntry::Type::kOther;
  }
  if (t == DT_DIR) return DirEntry::Type::kDirectory;
  if (t == DT_REG) return DirEntry::Type::kRegular;
  return DirEntry::Type::kOther;
}

}  // namespace

// Reads all entries of a directory opened for reading, with getdents64(2) on the descriptor
// itself: no dup, no DIR stream (fdopendir costs an fstat and an fcntl), which matters on
// the remover's path, where every aged directory is read once.
//
// With `maybe_more`, it stops after a buffer that came back with room for one more entry of
// the longest name, and says so in *maybe_more. Local file systems (tmpfs, ext4, xfs, btrfs)
// fill the buffer while entries remain, so that buffer was the last one and the getdents64
// that would return 0 is saved: one system call per aged directory. A caller that must see
// every entry (the remover) checks with rmdir's ENOTEMPTY and then reads again in full.
Result<std::vector<DirEntry>> ReadEntries(int fd, const std::string& what, bool* maybe_more) {
  struct linux_dirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
  };
  // The largest record: header, a NAME_MAX name and its NUL, padded to 8 bytes.
  constexpr long kMaxRecord = (offsetof(linux_dirent64, d_name) + NAME_MAX + 1 + 7) / 8 * 8;
  alignas(linux_dirent64) char buf[32768];
  std::vector<DirEntry> out;
  if (maybe_more) *maybe_more = false;
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n < 0) {
      int err = errno;
      if (err == EINTR) continue;
      return Errno(err, "readdir " + what);
    }
    if (n == 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
      off += d->d_reclen;
      std::string_view name = d->d_name;
      if (name == "." || name == "..") continue;
      out.push_back({std::string(name), TypeOf(fd, d->d_name, d->d_type)});
    }
    if (maybe_more && n + kMaxRecord <= static_cast<long>(sizeof buf)) {
      *maybe_more = true;
      break;
    }
  }
  return out;
}


// Removes `name` inside `parent`. Directories are opened O_NOFOLLOW and emptied through their
// own descriptor; everything else (files, symlinks, fifos) is unlinked, which never follows.
// `name` is a NUL-terminated entry name (an entry read from the directory, or the tail of the
// aged directory's path).
// *absent (if given) says that `name` was not there at all.
Status RemoveAt(int parent, const char* name, const std::string& shown, dev_t dev, int depth, bool* absent) {
  if (depth > kMaxRemoveDepth) return Status::Error(ELOOP, shown + ": tree too deep");
  UniqueFd fd(OpenBeneathAt(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
  if (!fd.valid()) {
    int err = errno;
    if (err == ENOENT) {
      if (absent) *absent = true;
      return Status::Ok();
    }
    if (err == EXDEV) return Status::Error(EXDEV, shown + " is on another filesystem; not removed");
    if (err == ENOTDIR || err == ELOOP) {  // a file or a symlink: unlink the entry itself
      if (::unlinkat(parent, name, 0) != 0 && errno != ENOENT) {
        int uerr = errno;
        return Errno(uerr, "unlink " + shown);
      }
      return Status::Ok();
    }
    return Errno(err, "open " + shown);
  }
  if (g_no_openat2.load(std::memory_order_relaxed)) {  // the walk does not check the leaf's mount
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
      int err = errno;
      return Errno(err, "stat " + shown);
    }
    if (st.st_dev != dev) return Status::Error(EXDEV, shown + " is on another filesystem; not removed");
  }
  int dfd = fd.get();
  // First pass: stop reading at a short buffer (see ReadEntries). If rmdir then finds the
  // directory not empty (a file system that returns short buffers, or an entry added
  // meanwhile), a second pass reads it from the start to the end, as every pass used to.
  for (bool last_pass = false;; last_pass = true) {
    bool maybe_more = false;
    if (last_pass && ::lseek(dfd, 0, SEEK_SET) != 0) {
      int err = errno;
      return Errno(err, "rewind " + shown);
    }
    auto entries = ReadEntries(dfd, shown, last_pass ? nullptr : &maybe_more);
    if (!entries.ok()) return entries.status();
    Status first_error;
    for (const DirEntry& e : *entries) {
      Status st2;
      if (e.type == DirEntry::Type::kDirectory) {
        st2 = RemoveAt(dfd, e.name.c_str(), shown + "/" + e.name, dev, depth + 1);
      } else if (::unlinkat(dfd, e.name.c_str(), 0) != 0 && errno != ENOENT) {
        int err = errno;
        st2 = Errno(err, "unlink " + shown + "/" + e.name);
      }
      if (!st2.ok() && first_error.ok()) first_error = st2;  // keep going: free what we can
    }
    if (!first_error.ok()) return first_error;
    if (::unlinkat(parent, name, AT_REMOVEDIR) == 0) return Status::Ok();
    int err = errno;
    if (err == ENOENT) return Status::Ok();
    if ((err == ENOTEMPTY || err == EEXIST) && maybe_more) continue;  // POSIX allows either
    return Errno(err, "rmdir " + shown);
  }
}

Result<bool> RemoveSmallAt(int base, const std::string& rel, size_t max_entries, dev_t dev, const std::string& shown) {
  if (Status st = CheckRelative(rel); !st.ok()) return st;
  UniqueFd fd(OpenBeneathAt(base, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
  if (!fd.valid()) {
    // Gone, or its process directory is (moved out of the tree): nothing of ours is there.
    // Anything else (a symlink or a file in its place or in its process directory's, another
    // mount) is RemoveTree's to judge, by the aside way.
    return errno == ENOENT;
  }
  if (g_no_openat2.load(std::memory_order_relaxed)) {  // the walk does not check the leaf's mount
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || st.st_dev != dev) return false;  // RemoveTree says why
  }
  // One read: a short buffer ends it (ReadEntries), and rmdir says if anything was left.
  bool short_read = false;
  auto entries = ReadEntries(fd.get(), shown, &short_read);
  if (!entries.ok()) return entries.status();
  if (entries->size() > max_entries) return false;
  for (const DirEntry& e : *entries) {
    if (e.type == DirEntry::Type::kDirectory) return false;
  }
  for (const DirEntry& e : *entries) {
    if (::unlinkat(fd.get(), e.name.c_str(), 0) != 0 && errno != ENOENT) {
      const int err = errno;
      return Errno(err, "unlink " + shown + "/" + e.name);
    }
  }
  // By its path: the directory was just found there, beneath `base` and through no link;
  // only an empty directory is ever removed by this call.
  if (::unlinkat(base, rel.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return true;
  if (errno == ENOTEMPTY || errno == EEXIST) return false;  // more than one read held, or added meanwhile
  const int err = errno;
  return Errno(err, "rmdir " + shown);
}

Result<DiskUsage> SumAt(int dirfd, const std::string& shown, dev_t dev, int depth) {
  if (depth > kMaxRemoveDepth) return Status::Error(ELOOP, shown + ": tree too deep");
  auto entries = ReadEntries(dirfd, shown);
  if (!entries.ok()) return entries.status();
  DiskUsage total;
  for (const DirEntry& e : *entries) {
    if (e.type == DirEntry::Type::kDirectory) {
      UniqueFd sub(::openat(dirfd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.valid()) continue;  // vanished or replaced: not ours to count
      struct stat st {};
      if (::fstat(sub.get(), &st) != 0 || st.st_dev != dev) continue;
      auto r = SumAt(sub.get(), shown + "/" + e.name, dev, depth + 1);
      if (r.ok()) total += *r;
    } else if (e.type == DirEntry::Type::kRegular) {
      struct stat st {};
      if (::fstatat(dirfd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
        total += UsageOf(st);
      }
    }
  }
  return total;
}


int OpenBeneathAt(int base, std::string_view rest, int flags, mode_t mode) {
  // `rest` is often a part of a longer path (a process directory out of "proc/event"): it
  // gets its NUL in a stack copy rather than in a std::string, so opening allocates nothing.
  char path[PATH_MAX];
  if (rest.size() >= sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(path, rest.data(), rest.size());
  path[rest.size()] = '\0';
  if (!g_no_openat2.load(std::memory_order_relaxed)) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = kResolve;
    long fd = ::syscall(SYS_openat2, base, path, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
    // EPERM may also be a real permission error; the walk then reports it again.
    if (errno == ENOSYS) g_no_openat2.store(true, std::memory_order_relaxed);
  }
  return WalkBeneath(base, std::string(rest), flags, mode);
}

}  // namespace atraced::posix
