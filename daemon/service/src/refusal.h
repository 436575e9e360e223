// What a handler returns: nothing for success, or the status (negative errno) and the
// message the client sees. The dispatcher encodes it and decides what to log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "atraced/proto/wire.h"

namespace atraced {

struct Refusal {
  int32_t status;
  std::string message;
  bool fd_budget = false;         // a descriptor refusal: logged once per interval per uid
  bool logged_elsewhere = false;  // a rate-limit or disk refusal: its own summary lines
};
using Reply = std::optional<Refusal>;

inline int32_t Neg(int err) { return -err; }

}  // namespace atraced
