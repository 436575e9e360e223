#include "hal_state.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace atraced::hal_double::drv {
namespace {

// An unsigned decimal from the environment, or `fallback` when unset or not a number.
uint32_t EnvUnsigned(const char* name, uint32_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long value = std::strtoul(text, &end, 10);
  if (errno != 0 || *end != '\0' || value > UINT32_MAX) return fallback;
  return static_cast<uint32_t>(value);
}

}  // namespace

std::string SocketDir() {
  const char* dir = std::getenv("ATRACE_HAL_DOUBLE_DIR");
  return dir == nullptr ? std::string() : std::string(dir);
}

uint32_t Platform() { return EnvUnsigned("ATRACE_HAL_DOUBLE_PLATFORM", PLATFORM_HOST_SIDE); }

uint32_t MaxSegment() {
  // Not clamped to adcore's [1024, 524288]: a test may want a driver that reports a value
  // outside it. 0 would make every send impossible, so it means the default.
  const uint32_t value = EnvUnsigned("ATRACE_HAL_DOUBLE_MAX_SEGMENT", 524288);
  return value == 0 ? 524288 : value;
}

std::string SocketPath(const std::string& dir, int devid, int service_type) {
  return dir + "/hdc-dev" + std::to_string(devid) + "-svc" + std::to_string(service_type) + ".sock";
}

void Log(const char* fmt, ...) {
  const char* on = std::getenv("ATRACE_HAL_DOUBLE_LOG");
  if (on == nullptr || on[0] != '1') return;
  char line[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  std::fprintf(stderr, "hal_double[%d]: %s\n", static_cast<int>(::getpid()), line);
}

drvError_t Ret(const char* name, drvError_t rc) {
  Log("%s -> %d", name, rc);
  return rc;
}

Session::~Session() { ::close(fd); }
Server::~Server() { ::close(fd); }
MsgState::~MsgState() {
  if (head == nullptr) return;
  if (driver_owned) std::free(head->bufList[0].pBuf);
  std::free(head);
}

Registry<Client>& Clients() {
  static auto* registry = new Registry<Client>;
  return *registry;
}
Registry<Session>& Sessions() {
  static auto* registry = new Registry<Session>;
  return *registry;
}
Registry<Server>& Servers() {
  static auto* registry = new Registry<Server>;
  return *registry;
}
Registry<MsgState>& Msgs() {
  static auto* registry = new Registry<MsgState>;
  return *registry;
}

}  // namespace atraced::hal_double::drv
