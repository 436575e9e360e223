// An alternate signal stack for every thread that uses the API, so that the crash handler
// can run, and report, even when a thread dies of overflowing its own stack (the fault is
// delivered on the stack that just ran out; without another one the kernel kills the process
// at once). Set up lazily on the thread's first API call (GetState), freed when the thread
// exits. A thread that already has one (the application's, or a runtime's) keeps it.
#pragma once

namespace ascend_trace {

// Cheap after the first call on a thread: one thread-local flag.
void EnsureThreadAltStack();

}  // namespace ascend_trace
