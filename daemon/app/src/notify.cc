#include "atraced/app/notify.h"

#include <systemd/sd-daemon.h>

namespace atraced {

void Notify(const std::string& state) { (void)::sd_notify(0, state.c_str()); }

}  // namespace atraced
