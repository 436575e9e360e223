#include "atraced/app/limits.h"

namespace atraced {

ServiceLimits LimitsFrom(const Config& config) {
  ServiceLimits limits;
  limits.max_events_per_client = config.max_events_per_client;
  limits.max_files_per_client = config.max_files_per_client;
  limits.max_rings_total = config.max_rings;
  limits.max_ring_memory = config.max_ring_memory;
  limits.uid_ring_share = config.uid_ring_share;
  limits.rate_limit = config.rate_limit;
  limits.max_bytes_per_client = config.max_bytes_per_client;
  limits.crash_budget = std::chrono::milliseconds(config.crash_unwind_timeout_ms);
  limits.max_queued_bytes = config.max_queued_bytes;
  limits.uid_queued_share = config.uid_queued_share;
  limits.hang = config.hang;
  return limits;
}

}  // namespace atraced
