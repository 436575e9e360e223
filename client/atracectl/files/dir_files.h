// Reading an event directory's files, as show, info and export all do: the names in it
// (sorted, hidden ones left out) and a whole file up to a bound.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "atraced/base/status.h"

namespace atracectl {

// The entries of `dir` not starting with '.', sorted; empty when it cannot be read, and then
// `err`, if given, is the errno (0 otherwise).
std::vector<std::string> SortedNames(const std::string& dir, int* err = nullptr);

// The whole of a regular file of at most `limit` bytes in `out`; an error saying why not
// otherwise (its message is what an operator reads: "not a regular file", strerror, ...).
atraced::Status ReadWhole(const std::string& path, size_t limit, std::string* out);

// The first `want` bytes (or all, when it is shorter) of a regular file of at most `limit`
// bytes; `cut` says whether more was left unread.
atraced::Status ReadUpTo(const std::string& path, size_t limit, size_t want, std::string* out, bool* cut);

}  // namespace atracectl
