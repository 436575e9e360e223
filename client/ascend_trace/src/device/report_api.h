// The device receivers' part in the library's life cycle.
#pragma once

namespace ascend_trace::device {

// Process exit: every receiver takes what has already arrived and ends, without sending
// [end] (CANN's rule: the driver may be going away). Bounded; called before GOODBYE.
void ExitAllReceivers();

}  // namespace ascend_trace::device
