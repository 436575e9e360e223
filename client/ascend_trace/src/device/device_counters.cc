#include "device/device_counters.h"

namespace ascend_trace::device {

DeviceCounters& CountersOf(uint32_t device) {
  // 40 KiB of zeroes in .bss; a process that never starts a device never touches them.
  static DeviceCounters counters[kMaxDevices];
  return counters[device % kMaxDevices];
}

}  // namespace ascend_trace::device
