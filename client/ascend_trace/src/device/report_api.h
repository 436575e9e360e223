// The device receivers' part in the library's life cycle.
#pragma once

namespace ascend_trace::device {

// Process exit: every receiver takes what has already arrived and ends, without sending
// [end] (CANN's rule: the driver may be going away). Bounded; called before GOODBYE.
void ExitAllReceivers();

// fork(), from the library's own handlers: the receiver table is held across it, and the
// child forgets the parent's receivers (their threads are not in it).
void LockForFork();
void UnlockAfterForkParent();
void ForgetAfterForkChild();

}  // namespace ascend_trace::device
