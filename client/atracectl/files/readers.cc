#include "files/readers.h"

#include <acl/libacl.h>
#include <grp.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

namespace atracectl {
namespace {

std::string GroupName(gid_t gid) {
  const struct group* g = ::getgrgid(gid);
  return g != nullptr ? g->gr_name : std::to_string(gid);
}

// The group an ACL names with `perm` (the trace directory's group:G:r-x, or the trace root's
// group:G:--x the daemon adds when it made the root), "" if none. Reading an ACL needs no
// read permission on the directory, only the way to it.
std::string AclReaderGroup(const std::string& dir, acl_perm_t perm) {
  acl_t acl = acl_get_file(dir.c_str(), ACL_TYPE_ACCESS);
  if (acl == nullptr) return "";
  std::string name;
  acl_entry_t entry;
  for (int which = ACL_FIRST_ENTRY; name.empty() && acl_get_entry(acl, which, &entry) == 1; which = ACL_NEXT_ENTRY) {
    acl_tag_t tag;
    acl_permset_t perms;
    if (acl_get_tag_type(entry, &tag) != 0 || tag != ACL_GROUP || acl_get_permset(entry, &perms) != 0 ||
        acl_get_perm(perms, perm) != 1) {
      continue;
    }
    if (auto* gid = static_cast<gid_t*>(acl_get_qualifier(entry))) {
      name = GroupName(*gid);
      acl_free(gid);
    }
  }
  acl_free(acl);
  return name;
}

}  // namespace

Readers Readers::Of(const std::string& trace_dir) {
  Readers r;
  r.uid_ = ::getuid();
  r.group_ = AclReaderGroup(trace_dir, ACL_READ);
  // A user with no directory yet may not reach the trace directory: its root names the group.
  if (r.group_.empty()) r.group_ = AclReaderGroup(trace_dir.substr(0, trace_dir.rfind('/')), ACL_EXECUTE);
  struct stat st {};
  if (r.group_.empty() && ::stat(trace_dir.c_str(), &st) == 0 && st.st_gid != 0 && (st.st_mode & S_IRGRP)) {
    r.group_ = GroupName(st.st_gid);  // a file system without ACLs: the group owns the tree
  }
  // Root, the reader group and the daemon's own user (its own daemon) may list it; a user
  // who may not even reach it is shown their own as well.
  r.sees_all_ = ::geteuid() == 0 || ::access(trace_dir.c_str(), R_OK | X_OK) == 0;
  return r;
}

std::string Readers::BelongsTo(uint64_t seq, uint32_t owner) const {
  // The daemon names no owner to a user who may not read the directory (ATR_LIST_HIDDEN).
  const std::string whose = owner == ATRACE_LIST_HIDDEN_UID ? "another user" : "uid " + std::to_string(owner);
  return "SEQ " + std::to_string(seq) + " belongs to " + whose + ": readable by that user, root" +
         (group_.empty() ? std::string() : " and group " + group_);
}

std::string Readers::HiddenLine(size_t hidden) const {
  return std::to_string(hidden) + " event director" + (hidden == 1 ? "y" : "ies") + " of other users hidden: uid " +
         std::to_string(uid_) + " sees its own; " +
         (group_.empty() ? std::string("root sees all") : "root and members of group " + group_ + " see all");
}

void Readers::KeepReadable(const char* command, std::vector<atrace::ListEntry>* entries) const {
  const auto gone = std::remove_if(entries->begin(), entries->end(), [this](const atrace::ListEntry& e) { return !Reads(e.uid); });
  const size_t hidden = static_cast<size_t>(entries->end() - gone);
  entries->erase(gone, entries->end());
  if (hidden != 0) std::cerr << "atracectl: " << command << ": " << HiddenLine(hidden) << "\n";
}

}  // namespace atracectl
