// Who may read the trace directory (docs/CONFIGURATION.md, reader-group): each process
// directory, its event directories and their files are readable by the uid of the process
// they were made for, by the reader group, and by root; nobody else. Only the daemon writes.
//
// With POSIX ACLs (libacl, as journald and systemd-coredump grant a user their own files):
//  - the trace directory: user::rwx, user:U:--x for each uid that has a directory (it may
//    reach its own, list nothing), group:G:r-x, group::---, other::---, and the same as its
//    default ACL without the --x entries, so anything made in it is private from birth;
//  - the trace root above it, when the daemon made it (it is the daemon's, and others may
//    not search it): user:U:--x added to what it has, so each uid reaches its own;
//  - a process directory: user:U:r-x and group:G:r-x, as both its access and its default
//    ACL, so event directories made in it later, and their files (created 0640: user:U:r--),
//    inherit the grant, whoever writes them through a passed descriptor afterwards.
// The owning group and group::--- keep any group an older tree carries (the setgid group
// atrace of older packages) from reading.
//
// On a file system without ACLs (checked once, when the trace directory is opened) nobody but
// root and the reader group reads: directories 0750 and files 0640 owned by group G (the
// process directories setgid, so what is made in them is group G too), or by the daemon's
// own group when no reader group is set. Never readable by others.
//
// Recovery checks every grant against this (RepairProcessDir) unless the order log vouches for
// them (its 'g' record, order_log.h, names Stamp()): then a process directory is read only if
// its metadata changed after its last entry (Unchanged). The known limit: a change of its ACL,
// mode or owner within the same clock tick as its last entry change, or one followed by an
// entry change, looks unchanged (docs/SECURITY.md, "Known limits").
//
// Threading: the owner thread only.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <set>
#include <string>

#include "atraced/base/status.h"
#include "atraced/base/unique_fd.h"

namespace atraced::posix {

class ReadGrants {
 public:
  explicit ReadGrants(std::optional<gid_t> reader_gid) : reader_gid_(reader_gid) {}

  // The trace directory (opened O_RDONLY) was opened or made again: probes the file system
  // for ACLs the first time, then sets the directory's own ACL (or mode and group). Forgets
  // the uids granted passage through an earlier trace directory. `rootfd`: the trace root.
  Status SetUpTraceDir(int rootfd, int dirfd, const std::string& shown);
  // Whether the file system takes ACLs (known after the first SetUpTraceDir).
  bool acls() const { return acls_; }
  // Set when the file system takes no ACLs: the one warning to log, naming it.
  const std::string& no_acl_warning() const { return no_acl_warning_; }

  // A process directory made for `uid` (opened O_RDONLY; the trace directory is `tracefd`):
  // readable by uid, root and the reader group, and so is everything made in it later.
  Status GrantProcessDir(int tracefd, int dirfd, uid_t uid, const std::string& shown);
  // Recovery: a process directory and everything in it made readable exactly as
  // GrantProcessDir would have. Returns whether anything had to change (a tree of an older
  // daemon, or one whose reader group was changed); a directory already right costs reads only.
  // A directory the check touches (its mtime set to now, so its ctime equals it) unless its
  // ctime already was its mtime: see Unchanged.
  Result<bool> RepairProcessDir(int tracefd, int dirfd, uid_t uid, const std::string& shown);
  // Recovery of a process directory whose grant the order log vouches for (Stamp) and whose
  // metadata did not change since (Unchanged): only the passage through the trace directory,
  // which is the daemon's memory, not the disk's.
  Status KeepProcessDir(int tracefd, uid_t uid, const std::string& shown);
  // Whether a process directory's last change was one of its entries (an event directory
  // made, removed or moved aside: ctime and mtime are set together) and not of its metadata
  // (an ACL, mode or owner: ctime alone). A grant the daemon checked leaves it so too.
  static bool Unchanged(const struct stat& st);

  // What every grant here looks like (FileSystem::GrantStamp): the form (ACLs, or group and
  // mode), the reader group and the daemon's uid. Known after the first SetUpTraceDir.
  std::string Stamp() const;

 private:
  Status AllowPassage(int tracefd, uid_t uid, const std::string& shown);
  // RepairProcessDir's check and repair, `st` the directory's stat.
  Result<bool> CheckProcessDir(int tracefd, int dirfd, const struct stat& st, uid_t uid, const std::string& shown);
  // The tree below a process directory (event directories and their files), set as
  // GrantProcessDir's inheritance would have made it.
  Status RepairBelow(int dirfd, uid_t uid, const std::string& shown, int depth);

  std::optional<gid_t> reader_gid_;
  bool probed_ = false;
  bool acls_ = true;
  std::string no_acl_warning_;
  std::set<uid_t> passage_;  // uids whose --x entry the current trace directory has
  UniqueFd root_;            // the trace root, when passage through it is given too
};

}  // namespace atraced::posix
