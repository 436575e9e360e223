#include "atraced/base/status.h"

#include <cstring>

namespace atraced {

std::string ErrnoMessage(std::string_view what, int err) {
  std::string out(what);
  out += ": ";
  out += std::strerror(err);
  return out;
}

}  // namespace atraced
