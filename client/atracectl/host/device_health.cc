#include "host/device_health.h"

#include <set>

#include "common/escape.h"

namespace atracectl {
namespace {

std::string LinkCommand(uint32_t device) { return "hccn_tool -i " + std::to_string(device) + " -link -g"; }

// How a run ended, for the text: "" when it exited 0.
std::string Ending(const BoundedRun& r) {
  if (!r.not_started.empty()) return "could not start: " + r.not_started;
  if (r.timed_out) return "killed after " + std::to_string(kHealthToolTimeout.count() / 1000) + " s";
  if (r.exit && *r.exit > 128) return "killed by signal " + std::to_string(*r.exit - 128);
  if (r.exit && *r.exit != 0) return "exited " + std::to_string(*r.exit);
  return "";
}

// A tool's output, each line escaped and indented; where it was cut, said.
std::string Indented(const BoundedRun& r, size_t bound) {
  std::string o;
  std::string_view rest = r.output;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    o += "    " + TerminalLine(rest.substr(0, nl)) + "\n";
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  if (r.cut) o += "    ... (cut: only its first " + std::to_string(bound) + " bytes are shown)\n";
  return o;
}

std::string RunJson(const std::string& command, const BoundedRun& r, bool skipped) {
  return "{\"command\":" + JsonString(command) + ",\"installed\":" + (r.installed ? "true" : "false") +
         ",\"run\":" + (r.installed && !skipped && r.not_started.empty() ? "true" : "false") +
         ",\"not_started\":" + (r.not_started.empty() ? std::string("null") : JsonString(r.not_started)) +
         ",\"exit\":" + (r.exit ? std::to_string(*r.exit) : std::string("null")) +
         ",\"timed_out\":" + (r.timed_out ? "true" : "false") + ",\"output\":" + JsonString(r.output) +
         ",\"cut\":" + (r.cut ? "true" : "false") + "}";
}

}  // namespace

DeviceHealth ReadDeviceHealth(const std::vector<pid_t>& pids) {
  DeviceHealth h;
  std::set<uint32_t> devices;
  for (pid_t pid : pids) {
    h.processes.push_back({pid, DeviceOfProcess(pid)});
    if (h.processes.back().where.device) devices.insert(*h.processes.back().where.device);
  }
  h.npu_smi = RunBounded({"npu-smi", "info"}, kHealthToolTimeout, kNpuSmiOutputBytes);
  bool go_on = true;  // a tool that is missing or hangs is not asked again for the next device
  for (uint32_t d : devices) {
    LinkHealth l;
    l.device = d;
    l.skipped = !go_on;
    if (go_on) {
      l.run = RunBounded({"hccn_tool", "-i", std::to_string(d), "-link", "-g"}, kHealthToolTimeout, kLinkOutputBytes);
    } else {
      l.run.installed = h.links.back().run.installed;
    }
    go_on = l.run.installed && !l.run.timed_out;
    h.links.push_back(std::move(l));
  }
  return h;
}

std::string DeviceHealthText(const DeviceHealth& h) {
  std::string o = "Devices (read by atracectl now; each process's device and rank are its environment's word):\n";
  for (const ProcessHealth& p : h.processes) {
    o += "  pid " + std::to_string(p.pid) + (p.where.rank ? " rank " + std::to_string(*p.where.rank) : "") + ": ";
    o += p.where.device ? "device " + std::to_string(*p.where.device) + " (" + TerminalLine(p.where.source) + ")"
                        : "device not known (" + TerminalLine(p.where.unknown) + ")";
    o += "\n";
  }
  if (!h.npu_smi.installed) {
    o += "npu-smi not installed (no npu-smi in PATH): the NPUs' health is not read\n";
  } else {
    const std::string ending = Ending(h.npu_smi);
    o += "npu-smi info" + (ending.empty() ? "" : " (" + ending + ")") + ":\n" + Indented(h.npu_smi, kNpuSmiOutputBytes);
  }
  if (h.links.empty()) {
    o += "hccn_tool: not run (no process names its device)\n";
  } else if (!h.links.front().run.installed) {
    o += "hccn_tool not installed (no hccn_tool in PATH): the links' state is not read\n";
  }
  for (const LinkHealth& l : h.links) {
    if (!l.run.installed) break;
    if (l.skipped) {
      o += LinkCommand(l.device) + ": not run (an earlier hccn_tool timed out)\n";
      continue;
    }
    const std::string ending = Ending(l.run);
    o += LinkCommand(l.device) + (ending.empty() ? "" : " (" + ending + ")") + ":\n" + Indented(l.run, kLinkOutputBytes);
  }
  return o;
}

std::string DeviceHealthJson(const DeviceHealth& h) {
  std::string o = "{\"processes\":[";
  for (size_t i = 0; i < h.processes.size(); ++i) {
    const ProcessHealth& p = h.processes[i];
    o += std::string(i ? "," : "") + "{\"pid\":" + std::to_string(p.pid) +
         ",\"rank\":" + (p.where.rank ? std::to_string(*p.where.rank) : std::string("null")) +
         ",\"device\":" + (p.where.device ? std::to_string(*p.where.device) : std::string("null")) +
         ",\"source\":" + (p.where.device ? JsonString(p.where.source) : std::string("null")) +
         ",\"unknown\":" + (p.where.device ? std::string("null") : JsonString(p.where.unknown)) + "}";
  }
  o += "],\"npu_smi\":" + RunJson("npu-smi info", h.npu_smi, false) + ",\"links\":[";
  for (size_t i = 0; i < h.links.size(); ++i) {
    o += std::string(i ? "," : "") + "{\"device\":" + std::to_string(h.links[i].device) +
         ",\"hccn_tool\":" + RunJson(LinkCommand(h.links[i].device), h.links[i].run, h.links[i].skipped) + "}";
  }
  return o + "]}";
}

}  // namespace atracectl
