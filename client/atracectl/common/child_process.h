// Starting a program from atracectl with its standard input and output on descriptors we
// hold, and waiting for it: how the tar bundle runs status, tar and gzip.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace atracectl {

// Starts args[0] (looked up in PATH) with stdin `in`, stdout `out` and stderr `err` (-1:
// inherited), in the working directory `dir` ("": ours); returns its pid, or -errno when it
// could not be started. Every other descriptor of ours is O_CLOEXEC and stays behind.
pid_t StartChild(const std::vector<std::string>& args, int in = -1, int out = -1, int err = -1,
                 const std::string& dir = "");

// Waits for `pid`; returns its exit status, or 128 + the signal that ended it.
int WaitChild(pid_t pid);

// "exited 2", "was killed by signal 9", or why it could not start (a StartChild error).
std::string ChildOutcome(int start_or_exit, bool started);

}  // namespace atracectl
