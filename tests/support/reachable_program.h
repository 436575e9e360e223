// Programs of the build tree, run as another user.
//
// A test that runs a program of the build tree as another user (a crashing client, a wedged
// rank, atracectl as user B) needs that user to reach the program: every directory above it
// searchable, the file and the libraries it loads from the build tree readable. A checkout
// under a 0700 directory (what `mktemp -d` makes, and many home directories are) denies that,
// and the program never starts. So such a program is staged first: copied, with the build
// tree's shared libraries it loads, into a directory of its own under /tmp that everyone may
// read, and run from there with LD_LIBRARY_PATH pointing at the copies (searched before a
// RUNPATH, and after an RPATH whose directory the user cannot enter). Where the build tree
// is reachable, nothing is copied.
#pragma once

#include <string>
#include <vector>

namespace atraced::testing {

struct ReachableProgram {
  std::string path;             // what to execute: the program itself, or its staged copy
  std::string library_path;     // "" or the value LD_LIBRARY_PATH needs
  std::string why_not;          // "" or why it could not be made reachable (the test fails on it)
  // "LD_LIBRARY_PATH=…" for an environment vector, or "" where none is needed.
  std::string LibraryPathEntry() const { return library_path.empty() ? "" : "LD_LIBRARY_PATH=" + library_path; }
};

// The first directory above `path` (or `path` itself) that a user who is neither its owner nor
// in its group cannot pass, as "DIR (mode 0700, owner uid 0)"; "" when every user can reach it.
std::string FirstUnreachable(const std::string& path);

// `program`, runnable by any user. Staged copies are made once per program and test process
// and removed when the test process exits.
ReachableProgram Reachable(const std::string& program);

}  // namespace atraced::testing
