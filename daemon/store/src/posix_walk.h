// The descriptor-relative walks PosixFileSystem is made of (posix_walk.cc). Every path they
// take is relative to a directory descriptor under the trace directory; none follows a
// symlink or crosses a mount.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "atraced/base/status.h"
#include "atraced/store/file_system.h"

namespace atraced::posix {

inline constexpr mode_t kDirMode = 0750;
inline constexpr mode_t kFileMode = 0640;

// errno is read by the caller before anything else can change it.
Status Errno(int err, const std::string& what);
// Refuses a relative path with a component that is not a plain name, or too deep. The event
// path checks every path it is given: this allocates nothing unless the path is refused.
Status CheckRelative(std::string_view rel);
// openat2 beneath `base` (no symlink, no mount crossed), or the O_NOFOLLOW walk where the
// kernel has no openat2. Returns a descriptor or -1 with errno.
int OpenBeneathAt(int base, std::string_view rest, int flags, mode_t mode);
// Both figures of a stat: st_blocks is in 512-byte units whatever the file system's block size.
DiskUsage UsageOf(const struct stat& st);
// Reads all entries of a directory opened for reading (see posix_walk.cc for `maybe_more`).
Result<std::vector<DirEntry>> ReadEntries(int fd, const std::string& what, bool* maybe_more = nullptr);
// Removes `name` inside `parent`, recursively, never following a symlink and never leaving
// device `dev`; *absent (if given) says that `name` was not there at all.
Status RemoveAt(int parent, const char* name, const std::string& shown, dev_t dev, int depth, bool* absent = nullptr);
// Removes the small directory `rel` (checked by CheckRelative) beneath `base`, as
// FileSystem::RemoveSmallDir: true once it is gone or not found; false, having removed nothing
// or only files, when it holds more than `max_entries` entries, a subdirectory, or is no plain
// directory on device `dev`.
Result<bool> RemoveSmallAt(int base, const std::string& rel, size_t max_entries, dev_t dev, const std::string& shown);
// The disk use of the tree under `dirfd`, on device `dev` only.
Result<DiskUsage> SumAt(int dirfd, const std::string& shown, dev_t dev, int depth);

}  // namespace atraced::posix
