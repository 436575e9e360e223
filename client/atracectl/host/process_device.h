// Which NPU a process uses and which rank it is, as its environment says: read from
// /proc/PID/environ (the environment it was started with: a later setenv is not seen), which
// only its own user and root may read. The process's word: a device number is used only when
// it is a plain number within ATR_MAX_DEVICE_ID, to name the device to a host tool.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace atracectl {

struct ProcessDevice {
  std::optional<int64_t> rank;    // RANK_ID, else RANK (a plain number)
  std::optional<uint32_t> device;  // the physical device, when one is named
  std::string source;              // how: "DEVICE_ID 1 through ASCEND_RT_VISIBLE_DEVICES 4,5" (shown escaped)
  std::string unknown;             // why no device, when none
};

// From the environment's bytes (NUL-separated NAME=value). The device: DEVICE_ID, else
// ASCEND_DEVICE_ID, else LOCAL_RANK (torchrun's, which torch_npu programs commonly set their
// device to): a logical number, mapped through ASCEND_RT_VISIBLE_DEVICES when that is set.
ProcessDevice DeviceFromEnvironment(std::string_view environ_bytes);

// The same for a live process; `unknown` says why when its environment cannot be read.
ProcessDevice DeviceOfProcess(pid_t pid);

}  // namespace atracectl
