#include "atraced/core/posix_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace atraced {
namespace {

constexpr mode_t kDirMode = 0750;
constexpr mode_t kFileMode = 0640;
constexpr int kMaxComponents = 3;
constexpr int kMaxRemoveDepth = 32;  // far deeper than the layout; stops pathological trees

Status Errno(const std::string& what, int err) { return Status::Error(err, ErrnoMessage(what, err)); }

// Splits "a/b/c" into components and refuses anything that is not a plain name.
Result<std::vector<std::string>> SplitRelative(const std::string& rel) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    std::string part = rel.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string::npos) {
      return Status::Error(EINVAL, "bad path component in [" + rel + "]");
    }
    parts.push_back(std::move(part));
    start = end + 1;
  }
  if (parts.size() > kMaxComponents) return Status::Error(EINVAL, "path too deep: [" + rel + "]");
  return parts;
}

DirEntry::Type TypeOf(int dirfd, const dirent* e) {
  unsigned char t = e->d_type;
  if (t == DT_UNKNOWN) {
    struct stat st {};
    if (::fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return DirEntry::Type::kOther;
    if (S_ISDIR(st.st_mode)) return DirEntry::Type::kDirectory;
    if (S_ISREG(st.st_mode)) return DirEntry::Type::kRegular;
    return DirEntry::Type::kOther;
  }
  if (t == DT_DIR) return DirEntry::Type::kDirectory;
  if (t == DT_REG) return DirEntry::Type::kRegular;
  return DirEntry::Type::kOther;
}

// Reads all entries of an open directory. Takes ownership of `fd`.
Result<std::vector<DirEntry>> ReadEntries(UniqueFd fd, const std::string& what) {
  DIR* d = ::fdopendir(fd.get());
  if (d == nullptr) return Errno("fdopendir " + what, errno);
  fd.release();  // owned by `d` now
  std::vector<DirEntry> out;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    out.push_back({std::string(name), TypeOf(::dirfd(d), e)});
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return Errno("readdir " + what, err);
  return out;
}

}  // namespace

PosixFileSystem::PosixFileSystem(std::string root, std::string trace_dir, UniqueFd dir_fd, dev_t dev,
                                 mode_t umask)
    : root_(std::move(root)), trace_dir_(std::move(trace_dir)), dir_fd_(std::move(dir_fd)), dev_(dev),
      umask_(umask) {}

Result<std::unique_ptr<PosixFileSystem>> PosixFileSystem::Open(const std::string& root) {
  if (root.empty() || root[0] != '/') return Status::Error(EINVAL, "trace root must be absolute: [" + root + "]");
  // Read the umask once: it decides whether new entries need an explicit chmod.
  mode_t mask = ::umask(0);
  ::umask(mask);
  auto fs = std::unique_ptr<PosixFileSystem>(
      new PosixFileSystem(root, root + "/atrace", UniqueFd(), 0, mask));
  if (Status st = fs->EnsureTraceDir(); !st.ok()) return st;
  return fs;
}

Status PosixFileSystem::EnsureTraceDir() {
  if (dir_fd_.valid()) {
    struct stat st {};
    // A deleted directory still has a descriptor, with no links: re-create it.
    if (::fstat(dir_fd_.get(), &st) == 0 && st.st_nlink > 0) return Status::Ok();
  }
  UniqueFd rootfd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!rootfd.valid()) return Errno("open trace root " + root_, errno);
  if (::mkdirat(rootfd.get(), "atrace", kDirMode) != 0 && errno != EEXIST) {
    return Errno("mkdir " + trace_dir_, errno);
  }
  UniqueFd fd(::openat(rootfd.get(), "atrace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Errno("open " + trace_dir_, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("stat " + trace_dir_, errno);
  // Keep a setgid bit an operator set (tmpfiles does, so that all below is group atrace).
  if ((st.st_mode & 0777) != kDirMode && st.st_uid == ::geteuid() &&
      ::fchmod(fd.get(), (st.st_mode & 07000) | kDirMode) != 0) {
    return Errno("chmod " + trace_dir_, errno);
  }
  dev_ = st.st_dev;
  dir_fd_ = std::move(fd);
  return Status::Ok();
}

Result<PosixFileSystem::Parent> PosixFileSystem::OpenParent(const std::string& rel) {
  auto parts = SplitRelative(rel);
  if (!parts.ok()) return parts.status();
  if (Status st = EnsureTraceDir(); !st.ok()) return st;
  Parent p;
  for (size_t i = 0; i + 1 < parts->size(); ++i) {
    int base = p.get(dir_fd_.get());
    UniqueFd next(::openat(base, (*parts)[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return Errno("open " + trace_dir_ + "/" + rel, errno);
    p.fd = std::move(next);
  }
  p.leaf = parts->back();
  return p;
}

Result<UniqueFd> PosixFileSystem::OpenDir(const std::string& rel) {
  if (rel.empty()) {
    if (Status st = EnsureTraceDir(); !st.ok()) return st;
    UniqueFd fd(::openat(dir_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) return Errno("open " + trace_dir_, errno);
    return fd;
  }
  auto parent = OpenParent(rel);
  if (!parent.ok()) return parent.status();
  UniqueFd fd(::openat(parent->get(dir_fd_.get()), parent->leaf.c_str(),
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return Errno("open " + trace_dir_ + "/" + rel, errno);
  return fd;
}

Status PosixFileSystem::FixMode(int dirfd, const std::string& name, mode_t wanted, bool is_dir) {
  if ((wanted & ~umask_) == wanted) return Status::Ok();  // the umask did not strip anything
  int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0);
  UniqueFd fd(::openat(dirfd, name.c_str(), flags));
  struct stat st {};
  // Keep a setgid bit inherited from the parent directory.
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || ::fchmod(fd.get(), (st.st_mode & 07000) | wanted) != 0) {
    return Errno("chmod " + name, errno);
  }
  return Status::Ok();
}

Status PosixFileSystem::MakeDir(const std::string& rel) {
  auto parent = OpenParent(rel);
  if (!parent.ok()) return parent.status();
  int pfd = parent->get(dir_fd_.get());
  if (::mkdirat(pfd, parent->leaf.c_str(), kDirMode) != 0) return Errno("mkdir " + trace_dir_ + "/" + rel, errno);
  return FixMode(pfd, parent->leaf, kDirMode, true);
}

Result<std::vector<DirEntry>> PosixFileSystem::ListDir(const std::string& rel) {
  auto fd = OpenDir(rel);
  if (!fd.ok()) return fd.status();
  return ReadEntries(std::move(*fd), trace_dir_ + "/" + rel);
}

Status PosixFileSystem::CreateEmptyFile(const std::string& rel) {
  auto parent = OpenParent(rel);
  if (!parent.ok()) return parent.status();
  int pfd = parent->get(dir_fd_.get());
  UniqueFd fd(::openat(pfd, parent->leaf.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, kFileMode));
  if (!fd.valid()) return Errno("create " + trace_dir_ + "/" + rel, errno);
  if ((kFileMode & ~umask_) != kFileMode && ::fchmod(fd.get(), kFileMode) != 0) {
    return Errno("chmod " + trace_dir_ + "/" + rel, errno);
  }
  return Status::Ok();
}

Result<UniqueFd> PosixFileSystem::OpenAppend(const std::string& rel) {
  auto parent = OpenParent(rel);
  if (!parent.ok()) return parent.status();
  std::string path = trace_dir_ + "/" + rel;
  UniqueFd fd(::openat(parent->get(dir_fd_.get()), parent->leaf.c_str(),
                       O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, kFileMode));
  if (!fd.valid()) return Errno("open " + path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("stat " + path, errno);
  // O_NONBLOCK above keeps a planted FIFO from blocking the open; refuse it and hard links.
  if (!S_ISREG(st.st_mode)) return Status::Error(EACCES, path + " is not a regular file");
  if (st.st_nlink != 1) return Status::Error(EACCES, path + " has " + std::to_string(st.st_nlink) + " links");
  if ((st.st_mode & 07777) != kFileMode && ::fchmod(fd.get(), kFileMode) != 0) return Errno("chmod " + path, errno);
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) return Errno("fcntl " + path, errno);
  return fd;
}

Status PosixFileSystem::Write(int fd, std::span<const uint8_t> data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", errno);
    }
    if (n == 0) return Status::Error(EIO, "write returned 0");
    data = data.subspan(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status PosixFileSystem::Rename(const std::string& from, const std::string& to) {
  auto pf = OpenParent(from);
  if (!pf.ok()) return pf.status();
  auto pt = OpenParent(to);
  if (!pt.ok()) return pt.status();
  if (::renameat2(pf->get(dir_fd_.get()), pf->leaf.c_str(), pt->get(dir_fd_.get()), pt->leaf.c_str(),
                  RENAME_NOREPLACE) != 0) {
    return Errno("rename " + trace_dir_ + "/" + from + " to " + to, errno);
  }
  return Status::Ok();
}

namespace {

// Removes `name` inside `parent`. Directories are opened O_NOFOLLOW and emptied through their
// own descriptor; everything else (files, symlinks, fifos) is unlinked, which never follows.
Status RemoveAt(int parent, const std::string& name, const std::string& shown, dev_t dev, int depth) {
  if (depth > kMaxRemoveDepth) return Status::Error(ELOOP, shown + ": tree too deep");
  UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    if (err == ENOENT) return Status::Ok();
    if (err == ENOTDIR || err == ELOOP) {  // a file or a symlink: unlink the entry itself
      if (::unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) return Errno("unlink " + shown, errno);
      return Status::Ok();
    }
    return Errno("open " + shown, err);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Errno("stat " + shown, errno);
  if (st.st_dev != dev) return Status::Error(EXDEV, shown + " is on another filesystem; not removed");
  int dfd = fd.get();
  auto entries = ReadEntries(UniqueFd(::dup(dfd)), shown);
  if (!entries.ok()) return entries.status();
  Status first_error;
  for (const DirEntry& e : *entries) {
    Status st2;
    if (e.type == DirEntry::Type::kDirectory) {
      st2 = RemoveAt(dfd, e.name, shown + "/" + e.name, dev, depth + 1);
    } else if (::unlinkat(dfd, e.name.c_str(), 0) != 0 && errno != ENOENT) {
      st2 = Errno("unlink " + shown + "/" + e.name, errno);
    }
    if (!st2.ok() && first_error.ok()) first_error = st2;  // keep going: free what we can
  }
  if (!first_error.ok()) return first_error;
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return Errno("rmdir " + shown, errno);
  return Status::Ok();
}

Result<uint64_t> SumAt(int dirfd, const std::string& shown, dev_t dev, int depth) {
  if (depth > kMaxRemoveDepth) return Status::Error(ELOOP, shown + ": tree too deep");
  auto entries = ReadEntries(UniqueFd(::dup(dirfd)), shown);
  if (!entries.ok()) return entries.status();
  uint64_t total = 0;
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
        total += static_cast<uint64_t>(st.st_size);
      }
    }
  }
  return total;
}

}  // namespace

Status PosixFileSystem::RemoveTree(const std::string& rel) {
  auto parent = OpenParent(rel);
  if (!parent.ok()) {
    if (parent.status().err() == ENOENT) return Status::Ok();
    return parent.status();
  }
  return RemoveAt(parent->get(dir_fd_.get()), parent->leaf, trace_dir_ + "/" + rel, dev_, 0);
}

Status PosixFileSystem::RemoveEmptyDir(const std::string& rel) {
  auto parent = OpenParent(rel);
  if (!parent.ok()) return parent.status();
  if (::unlinkat(parent->get(dir_fd_.get()), parent->leaf.c_str(), AT_REMOVEDIR) != 0) {
    return Errno("rmdir " + trace_dir_ + "/" + rel, errno);
  }
  return Status::Ok();
}

Result<uint64_t> PosixFileSystem::TreeBytes(const std::string& rel) {
  auto fd = OpenDir(rel);
  if (!fd.ok()) return fd.status();
  return SumAt(fd->get(), trace_dir_ + "/" + rel, dev_, 0);
}

}  // namespace atraced
