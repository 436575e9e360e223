// atracectl list's filters (issue 26): which event directories a user asked for.
//   --pid N, --uid N, --kind schedule|stackcore|exit, --side host|device, --device N,
//   --since T, --until T, where T takes journalctl's forms:
//     "2026-12-01 10:00[:SS]", "2026-12-01" (midnight), "10:00[:SS]" (today), "now",
//     "today", "yesterday", "tomorrow", "-1h" / "+30min" / "-2d" / "-1w" (from now; units s,
//     sec, m, min, h, hour(s), d, day(s), w, week(s)), "@SECONDS" (since the epoch),
//   in the local time zone. Every filter given must hold (they combine with AND).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <boost/program_options.hpp>

#include "atraced/atrace_client.hpp"

namespace atracectl {

// A time spec as microseconds since the epoch; nullopt with `why` when it is not one.
// `now_us` is "now" (a parameter, for tests and for one "now" per command).
std::optional<int64_t> ParseTimeSpec(const std::string& spec, int64_t now_us, std::string* why);

struct ListFilter {
  std::optional<int32_t> pid;
  std::optional<uint32_t> uid;
  std::optional<int> kind;  // ATRACE_EVENT_*
  std::optional<int> side;  // ATRACE_SIDE_*
  std::optional<uint32_t> device;
  std::optional<int64_t> since_us, until_us;  // inclusive
  bool Matches(const atrace::ListEntry& e) const;
};

// The filter options (list and export share them), and the filter they give; false after
// printing a usage error (exit_code set).
void AddFilterOptions(boost::program_options::options_description& options);
bool ReadFilter(const boost::program_options::variables_map& vm, int64_t now_us, ListFilter* f, int* exit_code);

}  // namespace atracectl
