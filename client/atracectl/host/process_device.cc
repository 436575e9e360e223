#include "host/process_device.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "atraced/proto/wire.h"

namespace atracectl {
namespace {

constexpr size_t kMaxEnvironBytes = 1 << 20;  // what is read of /proc/PID/environ
constexpr size_t kMaxShownValue = 64;         // of a value quoted in `source`

// A plain decimal number of at most 9 digits (no sign, no spaces), else nullopt.
std::optional<int64_t> Number(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string Shown(std::string_view v) {
  return v.size() > kMaxShownValue ? std::string(v.substr(0, kMaxShownValue)) + "..." : std::string(v);
}

}  // namespace

ProcessDevice DeviceFromEnvironment(std::string_view bytes) {
  static const char* const kWanted[] = {"RANK_ID", "RANK", "DEVICE_ID", "ASCEND_DEVICE_ID", "LOCAL_RANK",
                                        "ASCEND_RT_VISIBLE_DEVICES"};
  std::map<std::string_view, std::string_view> env;  // the first of each name, as getenv finds it
  while (!bytes.empty()) {
    const size_t end = bytes.find('\0');
    const std::string_view entry = bytes.substr(0, end);
    bytes = end == std::string_view::npos ? std::string_view() : bytes.substr(end + 1);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    for (const char* name : kWanted) {
      if (entry.substr(0, eq) == name) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  ProcessDevice out;
  for (const char* name : {"RANK_ID", "RANK"}) {
    auto it = env.find(name);
    if (it != env.end() && !out.rank) out.rank = Number(it->second);
  }
  const char* named = nullptr;
  std::optional<int64_t> logical;
  for (const char* name : {"DEVICE_ID", "ASCEND_DEVICE_ID", "LOCAL_RANK"}) {
    auto it = env.find(name);
    if (it == env.end()) continue;
    named = name;
    logical = Number(it->second);
    if (!logical) {
      out.unknown = std::string(name) + " is not a device number: '" + Shown(it->second) + "'";
      return out;
    }
    break;
  }
  if (named == nullptr) {
    out.unknown = "no DEVICE_ID, ASCEND_DEVICE_ID or LOCAL_RANK in its environment";
    return out;
  }
  out.source = std::string(named) + " " + std::to_string(*logical);
  int64_t physical = *logical;
  auto visible = env.find("ASCEND_RT_VISIBLE_DEVICES");
  if (visible != env.end()) {
    // A comma-separated list of physical devices: logical device i is the i-th.
    std::vector<std::optional<int64_t>> list;
    std::string_view rest = visible->second;
    while (list.size() <= ATR_MAX_DEVICE_ID) {
      const size_t comma = rest.find(',');
      list.push_back(Number(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    if (*logical >= static_cast<int64_t>(list.size()) || !list[static_cast<size_t>(*logical)]) {
      out.unknown = out.source + " is not in ASCEND_RT_VISIBLE_DEVICES '" + Shown(visible->second) + "'";
      out.source.clear();
      return out;
    }
    physical = *list[static_cast<size_t>(*logical)];
    out.source += " through ASCEND_RT_VISIBLE_DEVICES " + Shown(visible->second);
  }
  if (physical > ATR_MAX_DEVICE_ID) {
    out.unknown = "device " + std::to_string(physical) + " is past " + std::to_string(ATR_MAX_DEVICE_ID);
    out.source.clear();
    return out;
  }
  out.device = static_cast<uint32_t>(physical);
  return out;
}

ProcessDevice DeviceOfProcess(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/environ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string bytes;
  int error = fd < 0 ? errno : 0;
  char buf[65536];
  while (fd >= 0 && bytes.size() < kMaxEnvironBytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  if (fd >= 0) ::close(fd);
  if (error != 0) {
    ProcessDevice out;
    out.unknown = std::string("its environment is not readable: ") + std::strerror(error);
    return out;
  }
  return DeviceFromEnvironment(bytes);
}

}  // namespace atracectl
