// `atracectl status --prometheus`: the daemon's STATUS as Prometheus text exposition format
// (version 0.0.4), readable as is by node_exporter's textfile collector: a HELP and a TYPE
// line per family, counters ending in _total, base units (bytes, seconds), class and reason
// as labels.
#pragma once

#include <string>

#include <atraced/atrace_client.h>

namespace atracectl {

std::string PrometheusText(const atrace_status& s);

}  // namespace atracectl
