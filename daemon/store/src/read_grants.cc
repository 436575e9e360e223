#include "read_grants.h"

#include <acl/libacl.h>
#include <fcntl.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "posix_walk.h"

namespace atraced::posix {
namespace {

constexpr mode_t kR = 4, kW = 2, kX = 1;

struct Entry {
  acl_tag_t tag;
  id_t id;  // ACL_USER and ACL_GROUP only
  mode_t perm;
};

// An acl_t that frees itself.
class Acl {
 public:
  explicit Acl(acl_t acl = nullptr) : acl_(acl) {}
  Acl(const Acl&) = delete;
  Acl& operator=(const Acl&) = delete;
  ~Acl() {
    if (acl_ != nullptr) acl_free(acl_);
  }
  acl_t get() const { return acl_; }

 private:
  acl_t acl_;
};

// Built entry by entry: no text form, so no user or group name is ever looked up (NSS) on
// the event path.
Acl Make(const std::vector<Entry>& entries) {
  acl_t acl = acl_init(static_cast<int>(entries.size()));
  if (acl == nullptr) return Acl();
  for (const Entry& e : entries) {
    acl_entry_t entry;
    acl_permset_t perms;
    if (acl_create_entry(&acl, &entry) != 0 || acl_set_tag_type(entry, e.tag) != 0) break;
    if ((e.tag == ACL_USER || e.tag == ACL_GROUP) && acl_set_qualifier(entry, &e.id) != 0) break;
    if (acl_get_permset(entry, &perms) != 0 || acl_clear_perms(perms) != 0) break;
    if ((e.perm & kR) && acl_add_perm(perms, ACL_READ) != 0) break;
    if ((e.perm & kW) && acl_add_perm(perms, ACL_WRITE) != 0) break;
    if ((e.perm & kX) && acl_add_perm(perms, ACL_EXECUTE) != 0) break;
  }
  return Acl(acl);
}

// The entries every ACL here has: the daemon (the owner) writes, the owning group and others
// read nothing, the reader group reads. The mask is always there, so that the mode's group
// bits keep showing 0750 and 0640 and a chmod to those modes grants nothing more.
std::vector<Entry> Base(mode_t owner, mode_t read, std::optional<gid_t> reader_gid) {
  std::vector<Entry> e{{ACL_USER_OBJ, 0, owner}, {ACL_GROUP_OBJ, 0, 0}, {ACL_MASK, 0, read}, {ACL_OTHER, 0, 0}};
  if (reader_gid) e.push_back({ACL_GROUP, *reader_gid, read});
  return e;
}

// A process directory's access and default ACL, and a file's in it: `uid` reads.
std::vector<Entry> ReaderEntries(uid_t uid, mode_t owner, mode_t read, std::optional<gid_t> reader_gid) {
  std::vector<Entry> e = Base(owner, read, reader_gid);
  if (uid != ::geteuid()) e.push_back({ACL_USER, uid, read});
  return e;
}

// acl_set_file of a default ACL takes a path: the directory's own, through /proc, so nothing
// is resolved again by name.
std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

Status SetAccess(int fd, const Acl& acl, const std::string& shown) {
  if (acl.get() == nullptr || acl_set_fd(fd, acl.get()) != 0) {
    int err = errno;
    return Errno(err, "set the ACL of " + shown);
  }
  return Status::Ok();
}

Status SetDefault(int fd, const Acl& acl, const std::string& shown) {
  if (acl.get() == nullptr || acl_set_file(FdPath(fd).c_str(), ACL_TYPE_DEFAULT, acl.get()) != 0) {
    int err = errno;
    return Errno(err, "set the default ACL of " + shown);
  }
  return Status::Ok();
}

// Whether the ACL of `type` on `fd` is `want` (acl_cmp: same entries, same permissions).
bool Has(int fd, acl_type_t type, const Acl& want) {
  Acl have(type == ACL_TYPE_ACCESS ? acl_get_fd(fd) : acl_get_file(FdPath(fd).c_str(), type));
  return have.get() != nullptr && want.get() != nullptr && acl_cmp(have.get(), want.get()) == 0;
}

// The file system's name for the warning: its type from statfs, by magic number.
std::string FsName(int fd) {
  struct statfs s {};
  if (::fstatfs(fd, &s) != 0) return "its file system";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0x858458f6: return "a ramfs";
    case 0x01021994: return "a tmpfs";
    case 0xEF53: return "an ext2/3/4 file system";
    case 0x4d44: return "a FAT file system";
    case 0x6969: return "an NFS mount";
    case 0x65735546: return "a FUSE file system";
    default: {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(s.f_type));
      return std::string("a file system of type ") + hex;
    }
  }
}

// Without ACLs: the reader group (or the daemon's own) owns, `mode` keeps others out.
Status GroupAndMode(int fd, gid_t gid, mode_t mode, const std::string& shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    return Errno(err, "stat " + shown);
  }
  if (st.st_gid != gid && ::fchown(fd, static_cast<uid_t>(-1), gid) != 0) {
    int err = errno;
    return Errno(err, "chgrp " + shown);
  }
  // After the chown, which clears a setgid bit.
  if ((st.st_mode & 07777) != mode || st.st_gid != gid) {
    if (::fchmod(fd, mode) != 0) {
      int err = errno;
      return Errno(err, "chmod " + shown);
    }
  }
  return Status::Ok();
}

// What the trace root has, and `tag` (ACL_USER or ACL_GROUP) `id` with --x: it keeps every
// entry it had.
Status AddPassage(int fd, acl_tag_t want, id_t id, const std::string& shown) {
  acl_t acl = acl_get_fd(fd);
  if (acl == nullptr) {
    int err = errno;
    return Errno(err, "read the ACL of " + shown);
  }
  bool has = false;
  acl_entry_t entry;
  for (int which = ACL_FIRST_ENTRY; !has && acl_get_entry(acl, which, &entry) == 1; which = ACL_NEXT_ENTRY) {
    acl_tag_t tag;
    if (acl_get_tag_type(entry, &tag) != 0 || tag != want) continue;
    auto* named = static_cast<id_t*>(acl_get_qualifier(entry));
    has = named != nullptr && *named == id;
    if (named != nullptr) acl_free(named);
  }
  acl_permset_t perms;
  // acl_create_entry may move the ACL: `acl` is the one to free whatever happens.
  const bool ok = has || (acl_create_entry(&acl, &entry) == 0 && acl_set_tag_type(entry, want) == 0 &&
                          acl_set_qualifier(entry, &id) == 0 && acl_get_permset(entry, &perms) == 0 &&
                          acl_clear_perms(perms) == 0 && acl_add_perm(perms, ACL_EXECUTE) == 0 &&
                          acl_calc_mask(&acl) == 0 && acl_set_fd(fd, acl) == 0);
  const int err = errno;
  acl_free(acl);
  if (!ok) {
    return Errno(err, std::string("let ") + (want == ACL_USER ? "uid " : "gid ") + std::to_string(id) + " pass through " +
                          shown);
  }
  return Status::Ok();
}

}  // namespace

Status ReadGrants::SetUpTraceDir(int rootfd, int dirfd, const std::string& shown) {
  passage_.clear();
  root_.reset();
  struct stat root {};
  if (::fstat(rootfd, &root) == 0 && root.st_uid == ::geteuid() && (root.st_mode & S_IXOTH) == 0) {
    root_.reset(::fcntl(rootfd, F_DUPFD_CLOEXEC, 0));
  }
  struct stat st {};
  if (::fstat(dirfd, &st) != 0) {
    int err = errno;
    return Errno(err, "stat " + shown);
  }
  // Not ours (an operator's directory the daemon may write into): left as it is.
  if (st.st_uid != ::geteuid()) return Status::Ok();
  // No setgid bit: the group a directory is made with says nothing about who reads it.
  if ((st.st_mode & 07777) != kDirMode && ::fchmod(dirfd, kDirMode) != 0) {
    int err = errno;
    return Errno(err, "chmod " + shown);
  }
  if (!probed_ || acls_) {
    Status set = SetAccess(dirfd, Make(Base(kR | kW | kX, kR | kX, reader_gid_)), shown);
    if (set.ok()) set = SetDefault(dirfd, Make(Base(kR | kW | kX, kR | kX, reader_gid_)), shown);
    const bool unsupported = set.err() == EOPNOTSUPP || set.err() == ENOTSUP;
    if (!probed_) {
      probed_ = true;
      acls_ = !unsupported;
      if (unsupported) {
        no_acl_warning_ = shown + " is on " + FsName(dirfd) + " without POSIX ACLs: users cannot be given their own " +
                          "traces; only root and " +
                          (reader_gid_ ? "the reader group (gid " + std::to_string(*reader_gid_) + ")"
                                       : std::string("the daemon's own group (no reader-group is set)")) +
                          " can read them (directories 0750, files 0640, nothing for others)";
      }
    }
    if (acls_) {
      if (set.ok() && root_.valid() && reader_gid_) {
        set = AddPassage(root_.get(), ACL_GROUP, *reader_gid_, shown.substr(0, shown.rfind('/')));
      }
      return set;
    }
  }
  return GroupAndMode(dirfd, reader_gid_.value_or(::getegid()), kDirMode, shown);
}

Status ReadGrants::AllowPassage(int tracefd, uid_t uid, const std::string& shown) {
  if (uid == ::geteuid() || passage_.count(uid)) return Status::Ok();
  std::vector<Entry> e = Base(kR | kW | kX, kR | kX, reader_gid_);
  for (uid_t u : passage_) e.push_back({ACL_USER, u, kX});
  e.push_back({ACL_USER, uid, kX});
  if (Status st = SetAccess(tracefd, Make(e), shown); !st.ok()) return st;
  passage_.insert(uid);
  if (root_.valid()) return AddPassage(root_.get(), ACL_USER, uid, shown.substr(0, shown.rfind('/')));
  return Status::Ok();
}

Status ReadGrants::GrantProcessDir(int tracefd, int dirfd, uid_t uid, const std::string& shown) {
  if (!acls_) {
    // setgid: the event directories and files made in it later are the group's too.
    return GroupAndMode(dirfd, reader_gid_.value_or(::getegid()), reader_gid_ ? (S_ISGID | kDirMode) : kDirMode, shown);
  }
  const auto entries = ReaderEntries(uid, kR | kW | kX, kR | kX, reader_gid_);
  if (Status st = SetAccess(dirfd, Make(entries), shown); !st.ok()) return st;
  if (Status st = SetDefault(dirfd, Make(entries), shown); !st.ok()) return st;
  return AllowPassage(tracefd, uid, shown.substr(0, shown.rfind('/')));
}

std::string ReadGrants::Stamp() const {
  // v1: the entries of ReaderEntries and Base, the modes of GroupAndMode. A later change of
  // what a grant is bumps it, so that an older tree is checked in full.
  return std::string("v1,") + (acls_ ? "acl" : "mode") + ",r=" + (reader_gid_ ? std::to_string(*reader_gid_) : "-") +
         ",u=" + std::to_string(::geteuid());
}

bool ReadGrants::Unchanged(const struct stat& st) {
  return st.st_ctim.tv_sec == st.st_mtim.tv_sec && st.st_ctim.tv_nsec == st.st_mtim.tv_nsec;
}

Status ReadGrants::KeepProcessDir(int tracefd, uid_t uid, const std::string& shown) {
  if (!acls_) return Status::Ok();
  return AllowPassage(tracefd, uid, shown.substr(0, shown.rfind('/')));
}

Result<bool> ReadGrants::RepairProcessDir(int tracefd, int dirfd, uid_t uid, const std::string& shown) {
  struct stat st {};
  if (::fstat(dirfd, &st) != 0) {
    int err = errno;
    return Errno(err, "stat " + shown);
  }
  auto changed = CheckProcessDir(tracefd, dirfd, st, uid, shown);
  // Checked: its mtime to now, which sets its ctime to the same instant, so that the next
  // start under the same stamp finds it unchanged (Unchanged) and reads nothing.
  if (changed.ok() && (*changed || !Unchanged(st))) {
    const timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
    (void)::futimens(dirfd, times);  // failing, it is checked again next time: no harm
  }
  return changed;
}

Result<bool> ReadGrants::CheckProcessDir(int tracefd, int dirfd, const struct stat& st, uid_t uid,
                                         const std::string& shown) {
  bool right = false;
  if (!acls_) {
    const gid_t gid = reader_gid_.value_or(::getegid());
    right = st.st_gid == gid && (st.st_mode & 07777) == (reader_gid_ ? (S_ISGID | kDirMode) : kDirMode);
  } else {
    const auto entries = ReaderEntries(uid, kR | kW | kX, kR | kX, reader_gid_);
    right = Has(dirfd, ACL_TYPE_ACCESS, Make(entries)) && Has(dirfd, ACL_TYPE_DEFAULT, Make(entries));
  }
  if (right) {
    if (!acls_) return false;
    if (Status p = AllowPassage(tracefd, uid, shown.substr(0, shown.rfind('/'))); !p.ok()) return p;
    return false;
  }
  // Below first: the process directory opens to its reader only once all of it is private.
  if (Status below = RepairBelow(dirfd, uid, shown, 1); !below.ok()) return below;
  if (Status granted = GrantProcessDir(tracefd, dirfd, uid, shown); !granted.ok()) return granted;
  return true;
}

Status ReadGrants::RepairBelow(int dirfd, uid_t uid, const std::string& shown, int depth) {
  UniqueFd list(::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!list.valid()) {
    int err = errno;
    return Errno(err, "open " + shown);
  }
  struct stat here {};
  if (::fstat(list.get(), &here) != 0) {
    int err = errno;
    return Errno(err, "stat " + shown);
  }
  auto entries = ReadEntries(list.get(), shown);
  if (!entries.ok()) return entries.status();
  const gid_t gid = reader_gid_.value_or(::getegid());
  for (const DirEntry& d : *entries) {
    if (d.type == DirEntry::Type::kOther) continue;  // a symlink or a socket is never followed
    const bool dir = d.type == DirEntry::Type::kDirectory;
    if (dir && depth >= 2) continue;  // an event directory holds files only
    const std::string path = shown + "/" + d.name;
    // O_NOFOLLOW and O_NONBLOCK: a name swapped for a symlink or a FIFO since the listing is
    // refused or not waited on.
    UniqueFd fd(::openat(dirfd, d.name.c_str(),
                         O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | (dir ? O_DIRECTORY : 0)));
    if (!fd.valid()) continue;  // gone since the listing
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) continue;
    if (st.st_dev != here.st_dev) continue;  // never across a mount
    if (dir) {
      if (Status s = RepairBelow(fd.get(), uid, path, depth + 1); !s.ok()) return s;
    }
    Status set;
    if (!acls_) {
      set = GroupAndMode(fd.get(), gid, dir ? (reader_gid_ ? (S_ISGID | kDirMode) : kDirMode) : kFileMode, path);
    } else if (dir) {
      const auto e = ReaderEntries(uid, kR | kW | kX, kR | kX, reader_gid_);
      set = SetAccess(fd.get(), Make(e), path);
      if (set.ok()) set = SetDefault(fd.get(), Make(e), path);
    } else {
      set = SetAccess(fd.get(), Make(ReaderEntries(uid, kR | kW, kR, reader_gid_)), path);
    }
    if (!set.ok()) return set;
  }
  return Status::Ok();
}

}  // namespace atraced::posix
