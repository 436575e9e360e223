// An alternate signal stack for every thread that uses the API, so that the crash handler
// can run, and report, even when a thread dies of overflowing its own stack (the fault is
// delivered on the stack that just ran out; without another one the kernel kills the process
// at once). Set up lazily on the thread's first API call (GetState), freed when the thread
// exits. A thread that already has one (the application's, or a runtime's) keeps it.
#pragma once

namespace ascend_trace {

namespace alt_stack_internal {
// Set on a thread's first pass through EnsureThreadAltStack. Initial-exec TLS, constant
// initialised: one load at a fixed offset from the thread pointer, with no __tls_get_addr
// call and no TLS init wrapper, because AtraceSubmit checks it on every record. One byte of
// static TLS is far inside what glibc keeps spare for libraries loaded later (dlopen).
extern thread_local constinit bool t_checked __attribute__((tls_model("initial-exec")));
void EnsureSlow();
}  // namespace alt_stack_internal

// Cheap after the first call on a thread: one thread-local flag, inlined.
inline void EnsureThreadAltStack() {
  if (__builtin_expect(!alt_stack_internal::t_checked, 0)) alt_stack_internal::EnsureSlow();
}

}  // namespace ascend_trace
