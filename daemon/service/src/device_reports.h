// DEVICE_STATS: what a process's device receivers counted, added to STATUS's devices block.
// The daemon cannot check a receiver's word, so it bounds what the word can do:
// - a process reports only for a device it receives from, which the daemon knows by the
//   device-side events that process wrote for it (ProcessRecord::devices); any other device
//   is -EPERM, so no user can make a device appear or touch one it never wrote for;
// - `saved` never goes past the device events the daemon took from that process;
// - each uid's figures for a device are counted apart and stop at kMaxPerUid, so that the
//   sum STATUS shows never saturates: one user's lie cannot freeze another's real losses.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>

#include "atraced/common/log.h"
#include "atraced/service/service_types.h"
#include "client.h"
#include "process_records.h"
#include "atraced/base/status.h"

namespace atraced {

class DeviceReports {
 public:
  // What one uid may add to a figure of one device: 2^48, 8.9 years of a million messages a
  // second. Even 65,535 uids at it leave the sum short of 2^64.
  static constexpr uint64_t kMaxPerUid = uint64_t{1} << 48;

  DeviceReports(ProcessRecords& records, ServiceCounters& counters) : records_(records), counters_(counters) {}

  // A device-side event the client's process began for `device_id`: what it may report for.
  void CountEvent(const Client& c, uint32_t device_id);
  // DEVICE_STATS from the client's process.
  Status OnDeviceStats(const Client& c, std::span<const uint8_t> payload);

 private:
  ProcessRecords& records_;
  ServiceCounters& counters_;
  std::map<std::pair<uint32_t, uint32_t>, DeviceCounts> by_uid_;  // (uid, device): what each uid added
};

}  // namespace atraced
