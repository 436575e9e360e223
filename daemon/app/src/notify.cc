#include "atraced/app/notify.h"

#include <systemd/sd-daemon.h>
#include <time.h>

namespace atraced {

void Notify(const std::string& state) { (void)::sd_notify(0, state.c_str()); }

std::string ReloadingMessage(uint64_t monotonic_usec) {
  return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec);
}

uint64_t MonotonicUsec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

}  // namespace atraced
