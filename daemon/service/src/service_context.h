// What every handler of the service shares: the daemon's parts (given once, at
// construction), the operator's limits (some applied again at SIGHUP) and the counters.
// The service (trace_service.cc) owns all three; each handler keeps references to them.
#pragma once

#include "atraced/service/service_types.h"

namespace atraced {

struct ServiceContext {
  const ServiceDependencies& deps;
  const ServiceLimits& limits;
  ServiceCounters& counters;
};

}  // namespace atraced
