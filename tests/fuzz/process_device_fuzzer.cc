// dump --devices's reading of a process's environment (client/atracectl/host/process_device.h):
// the bytes of /proc/PID/environ are the process's own, so anything. The device named is a
// number within ATR_MAX_DEVICE_ID or none, what is quoted of a value is bounded, and the
// report (text and JSON), with the same bytes as a tool's output, holds no control byte but
// its newlines.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "atraced/proto/wire.h"
#include "host/device_health.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  atracectl::DeviceHealth h;
  h.processes.push_back({1, atracectl::DeviceFromEnvironment(in)});
  const atracectl::ProcessDevice& p = h.processes.back().where;
  if (p.device && *p.device > ATR_MAX_DEVICE_ID) std::abort();
  if (p.device.has_value() != p.unknown.empty()) std::abort();  // a device or why none, always
  if (p.source.size() > 512 || p.unknown.size() > 512) std::abort();
  h.npu_smi.installed = true;
  h.npu_smi.exit = 0;
  h.npu_smi.output = std::string(in.substr(0, atracectl::kNpuSmiOutputBytes));
  if (p.device) {
    atracectl::LinkHealth l;
    l.device = *p.device;
    l.run = h.npu_smi;
    h.links.push_back(l);
  }
  const std::string text = atracectl::DeviceHealthText(h);
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\n') || c == 0x7f) std::abort();
  }
  for (unsigned char c : atracectl::DeviceHealthJson(h)) {
    if (c < 0x20) std::abort();
  }
  return 0;
}
