// PosixFileSystem, who reads what (read_grants.h): the process directories' grants and the
// file system's word on ACLs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atraced/store/posix_file_system.h"
#include "posix_walk.h"
#include "read_grants.h"

namespace atraced {

using namespace posix;

const std::string& PosixFileSystem::no_acl_warning() const { return grants_->no_acl_warning(); }

Result<UniqueFd> PosixFileSystem::OpenProcessDir(const std::string& process_dir) {
  if (Status st = CheckRelative(process_dir); !st.ok()) return st;
  if (process_dir.find('/') != std::string::npos) return Status::Error(EINVAL, "not a process directory: " + process_dir);
  UniqueFd fd(OpenBeneath(OwnerDirFd()->get(), process_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
  if (!fd.valid()) {
    int err = errno;
    return Errno(err, "open " + trace_dir_ + "/" + process_dir);
  }
  return fd;
}

Status PosixFileSystem::GrantRead(const std::string& process_dir, uint32_t uid) {
  auto fd = OpenProcessDir(process_dir);
  if (!fd.ok()) return fd.status();
  return grants_->GrantProcessDir(OwnerDirFd()->get(), fd->get(), uid, trace_dir_ + "/" + process_dir);
}

Result<bool> PosixFileSystem::RepairGrant(const std::string& process_dir, uint32_t uid) {
  auto fd = OpenProcessDir(process_dir);
  if (!fd.ok()) return fd.status();
  return grants_->RepairProcessDir(OwnerDirFd()->get(), fd->get(), uid, trace_dir_ + "/" + process_dir);
}

std::string PosixFileSystem::GrantStamp() const { return grants_->Stamp(); }

Result<bool> PosixFileSystem::RecheckGrant(const std::string& process_dir, uint32_t uid) {
  if (Status st = CheckRelative(process_dir); !st.ok()) return st;
  // One stat by name, no open: the directory checked in full if anything is other than the
  // daemon left it (not a directory of its own, or its metadata changed since its entries).
  struct stat st {};
  if (process_dir.find('/') == std::string::npos &&
      ::fstatat(OwnerDirFd()->get(), process_dir.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == ::geteuid() && ReadGrants::Unchanged(st)) {
    if (Status kept = grants_->KeepProcessDir(OwnerDirFd()->get(), uid, trace_dir_ + "/" + process_dir); !kept.ok()) {
      return kept;
    }
    return false;
  }
  return RepairGrant(process_dir, uid);
}

}  // namespace atraced
