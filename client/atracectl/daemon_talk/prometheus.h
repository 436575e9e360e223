// `atracectl status --prometheus`: the daemon's STATUS as Prometheus text exposition format
// (version 0.0.4), readable as is by node_exporter's textfile collector: a HELP and a TYPE
// line per family, counters ending in _total, base units (bytes, seconds), class and reason
// as labels.
#pragma once

#include <string>
#include <vector>

#include <atraced/atrace_client.hpp>

namespace atracectl {

// `shares` are the pools of atrace_client_shares (empty from a daemon without them).
std::string PrometheusText(const atrace_status& s, const std::vector<atrace::Share>& shares = {},
                           const std::vector<atrace_device_stat>& devices = {});

}  // namespace atracectl
