// What the device's producers queue (device-channel.md §4.3), as injected by the control
// socket: TS firmware chunks (name ts_{phy}, seqFlag = the chunk's endFlag, the event time
// fixed by the node), utrace objects (seqFlag 3, their own time), and hostile messages
// the host's receiver must survive. Each becomes an Outgoing: the HDC messages that carry it.
#pragma once

#include <string>
#include <string_view>

#include "device_sessions.h"
#include "trace_wire.h"

namespace atraced::hal_double::device {

// Limits the device's own checks put on a producer's data.
constexpr size_t kMaxTsData = 524288 - 32;  // TraceInfoHead (32) + data ≤ 512 KiB
constexpr size_t kMaxUtraceData = 524288 - 88;  // UtraceMsg head (88) + data ≤ 512 KiB

// The data an injection carries: `fill` repeated, or (fill == 0) a pattern that makes
// order visible: text 'a'..'z' cycling, binary bytes 0..255 cycling.
std::string Fill(size_t bytes, char fill, bool binary);

// A TraceEventMsg in its MsgProto, split at the device's maxSegment.
Outgoing EventMessage(const wire::Event& event, std::string what);

// The hostile message of `kind` for the long link of (pid, dev); false (with why) for an
// unknown kind. HostileKinds() lists them.
bool HostileMessage(std::string_view kind, int pid, int dev, Outgoing* out, std::string* why);
std::string HostileKinds();

uint32_t DeviceMaxSegment();

}  // namespace atraced::hal_double::device
