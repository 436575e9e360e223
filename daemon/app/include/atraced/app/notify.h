// sd_notify, called unconditionally: outside systemd it does nothing (returns 0).
#pragma once

#include <cstdint>
#include <string>

namespace atraced {

void Notify(const std::string& state);

// "RELOADING=1\nMONOTONIC_USEC=<usec>": plain RELOADING=1 is enough for Type=notify;
// MONOTONIC_USEC (CLOCK_MONOTONIC at the start of the reload) makes the same message
// valid for Type=notify-reload (systemd 253+).
std::string ReloadingMessage(uint64_t monotonic_usec);
uint64_t MonotonicUsec();

}  // namespace atraced
