// The service's limits as the configuration file sets them: one function builds them at
// start-up and at SIGHUP, so a key reaches the service the same way both times.
#include <catch2/catch.hpp>

#include <string>

#include "atraced/app/config.h"
#include "atraced/app/limits.h"

using namespace atraced;

TEST_CASE("every limit the configuration file sets reaches the service's limits", "[config][limits]") {
  Config config;
  const std::string text =
      "max-events-per-client = 7\n"
      "max-files-per-client = 9\n"
      "max-rings = 100\n"
      "max-ring-memory = 64M\n"
      "uid-ring-share = 40\n"
      "rate-limit-interval = 10s\n"
      "rate-limit-burst = 5\n"
      "max-bytes-per-client = 1M\n"
      "crash-unwind-timeout-ms = 300\n"
      "max-queued-bytes = 8M\n"
      "uid-queued-share = 60\n";
  REQUIRE(ParseConfigText(text, "test.conf", &config).empty());
  const ServiceLimits limits = LimitsFrom(config);
  CHECK(limits.max_events_per_client == 7);
  CHECK(limits.max_files_per_client == 9);
  CHECK(limits.max_rings_total == 100);
  CHECK(limits.max_ring_memory == 64ull << 20);
  CHECK(limits.uid_ring_share == 40);
  CHECK(limits.rate_limit == RateLimit{std::chrono::seconds(10), 5});
  CHECK(limits.max_bytes_per_client == 1ull << 20);
  CHECK(limits.crash_budget == std::chrono::milliseconds(300));
  CHECK(limits.max_queued_bytes == 8ull << 20);
  CHECK(limits.uid_queued_share == 60);
}

TEST_CASE("an empty configuration gives the service's own defaults", "[config][limits]") {
  const ServiceLimits limits = LimitsFrom(Config{});
  const ServiceLimits defaults;
  CHECK(limits.max_events_per_client == defaults.max_events_per_client);
  CHECK(limits.max_files_per_client == defaults.max_files_per_client);
  CHECK(limits.max_rings_total == defaults.max_rings_total);
  CHECK(limits.max_ring_memory == defaults.max_ring_memory);
  CHECK(limits.uid_ring_share == defaults.uid_ring_share);
  CHECK(limits.rate_limit == defaults.rate_limit);
  CHECK(limits.max_bytes_per_client == defaults.max_bytes_per_client);
  CHECK(limits.crash_budget == defaults.crash_budget);
  CHECK(limits.max_queued_bytes == defaults.max_queued_bytes);
  CHECK(limits.uid_queued_share == defaults.uid_queued_share);
}
