// sd_notify, called unconditionally: outside systemd it does nothing (returns 0).
#pragma once

#include <string>

namespace atraced {

void Notify(const std::string& state);

}  // namespace atraced
