// What a handler returns: nothing for success, or the status (negative errno) and the
// message the client sees. The dispatcher encodes it and logs it through the daemon's one
// refusal throttle (refusal_log.h): a handler never logs a refusal itself, so that one
// uid's flood is one line whichever path it takes. The message names what the log needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "atraced/proto/wire.h"

namespace atraced {

struct Refusal {
  int32_t status;
  std::string message;
  // An attempt on a bound or a permission (descriptors, a forwarder claim, a vacuum, a
  // ring's share): logged as a warning, with the count of those not logged.
  bool warn = false;
  bool logged_elsewhere = false;  // a rate-limit or disk refusal: its own summary lines
};
using Reply = std::optional<Refusal>;

inline int32_t Neg(int err) { return -err; }

}  // namespace atraced
