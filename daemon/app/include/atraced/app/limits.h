// The service's limits as the configuration sets them: built by one function, at start-up
// and again at SIGHUP, so the two cannot drift apart.
#pragma once

#include "atraced/app/config.h"
#include "atraced/service/service_types.h"

namespace atraced {

// Every ServiceLimits field the configuration holds. Who the daemon is (daemon_uid,
// forwarder_gid, root) is not configuration text: start-up sets it.
ServiceLimits LimitsFrom(const Config& config);

}  // namespace atraced
