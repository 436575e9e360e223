// The health of the NPUs that dumped processes use, as the host's own tools tell it cheaply:
// `npu-smi info` (every NPU's health, once) and `hccn_tool -i N -link -g` (the link state of
// each device a process names). Read by `atracectl dump --devices` as the operator, at dump
// time: each process's device and rank come from its environment (process_device.h), and
// where a tool is not installed the report says so. Every output is bounded here and
// escaped where it is shown.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "host/bounded_run.h"
#include "host/process_device.h"

namespace atracectl {

struct ProcessHealth {
  pid_t pid = 0;
  ProcessDevice where;
};

struct LinkHealth {
  uint32_t device = 0;
  BoundedRun run;
  bool skipped = false;  // not run: hccn_tool is not installed, or an earlier run timed out
};

struct DeviceHealth {
  std::vector<ProcessHealth> processes;
  BoundedRun npu_smi;
  std::vector<LinkHealth> links;  // one per distinct device, by device
};

inline constexpr size_t kNpuSmiOutputBytes = 16 * 1024;
inline constexpr size_t kLinkOutputBytes = 1024;
inline constexpr std::chrono::milliseconds kHealthToolTimeout{5000};

DeviceHealth ReadDeviceHealth(const std::vector<pid_t>& pids);

// The report's text (after dump's paths) and its JSON object (dump --json's "devices").
std::string DeviceHealthText(const DeviceHealth& h);
std::string DeviceHealthJson(const DeviceHealth& h);

}  // namespace atracectl
