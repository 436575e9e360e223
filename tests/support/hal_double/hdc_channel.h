// Whole trace-channel messages over the driver API: a logical message goes out as its
// IdeHdcPacket chain (one halHdcSend per packet) and comes back reassembled up to isLast.
// Both the fake device and the self-tests' minimal host use it; it calls only the driver
// functions the real host path calls.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ascend_hal_double.h"

namespace atraced::hal_double::channel {

// One HDC message as it is (a prebuilt or hostile packet).
drvError_t SendOne(HDC_SESSION session, std::string_view hdc_message, UINT64 flag = 0, UINT32 timeout = 0);
// Several, in order; stops at the first failure.
drvError_t SendAll(HDC_SESSION session, const std::vector<std::string>& hdc_messages, UINT64 flag = 0,
                   UINT32 timeout = 0);
// A logical message split at drvHdcGetCapacity's maxSegment − 12.
drvError_t SendMessage(HDC_SESSION session, std::string_view message, UINT64 flag = 0, UINT32 timeout = 0);

// One HDC message (one halHdcRecv) into `out`.
drvError_t RecvOne(HDC_SESSION session, std::string* out, UINT64 flag, UINT32 timeout);

enum class Recv { kOk, kNoData, kClosed, kError, kBadPacket, kTooBig };
const char* Name(Recv r);
// Packets until isLast, each awaited up to `timeout_ms` (< 0: forever). A message over
// `cap` bytes is read on to its isLast and dropped (kTooBig); a malformed packet ends the
// message (kBadPacket) and the rest of its chain is the caller's to skip or not.
Recv RecvMessage(HDC_SESSION session, std::string* out, int timeout_ms, size_t cap, std::string* why);

}  // namespace atraced::hal_double::channel
