// Who the user running atracectl is, beside who reads the trace directory (the daemon's
// read grants, docs/CONFIGURATION.md reader-group): each uid reads its own directories, root
// and the reader group read all. Like journalctl, a user who is neither sees their own, and
// is told that others' are hidden and which group shows all.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "atraced/atrace_client.hpp"

namespace atracectl {

class Readers {
 public:
  // Asks the trace directory itself: whether this user may list it (root and the reader
  // group may), and which group its ACL (or, on a file system without ACLs, its owner) names.
  static Readers Of(const std::string& trace_dir);

  // Whether this user reads the directories of `uid`.
  bool Reads(uint32_t uid) const { return sees_all_ || uid == uid_; }
  bool sees_all() const { return sees_all_; }
  // "SEQ N belongs to uid U: readable by that user, root and group G".
  std::string BelongsTo(uint64_t seq, uint32_t owner) const;
  // The line list, du and export print (to standard error) when they left out `hidden`
  // directories of other users.
  std::string HiddenLine(size_t hidden) const;
  // Drops from `entries` the directories this user does not read, and says so on standard
  // error ("atracectl: COMMAND: ...") when it dropped any.
  void KeepReadable(const char* command, std::vector<atrace::ListEntry>* entries) const;

 private:
  bool sees_all_ = true;
  uid_t uid_ = 0;
  std::string group_;  // the reader group's name, "" when none is set
};

}  // namespace atracectl
