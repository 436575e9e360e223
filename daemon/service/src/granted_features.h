// What HELLO grants: the features asked for that this daemon supports, less the ones whose
// prerequisite was not granted with them (each feature's rule is in wire.h).
#pragma once

#include <cstdint>

namespace atraced {

// `asked` is HELLO's feature bits; `counter_trusted` whether the daemon's own measurements
// trust the cycle counter now (counter_clock.h).
uint64_t GrantedFeatures(uint64_t asked, bool counter_trusted);

}  // namespace atraced
