// What the library tells a user on stderr when atraced cannot be reached: once per outage,
// with the socket, the cause and the fix, unless ATRACE_QUIET=1.
#pragma once

#include <string>
#include <vector>

namespace ascend_trace {

// ATRACE_QUIET=1: no outage lines on stderr (an application whose stderr is its output).
bool QuietOutages();

// "cannot reach atraced: ..." for the first of `paths` that exists, with the fix for `err`.
std::string DescribeUnreachable(const std::vector<std::string>& paths, int err);

}  // namespace ascend_trace
