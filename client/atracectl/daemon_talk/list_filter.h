// atracectl list's filters (issue 26): which event directories a user asked for.
//   --pid N, --uid N, --comm NAME, --job J, --rank R (the labels the process sent), --kind schedule|stackcore|exit, --side host|device, --device N,
//   --since T, --until T, where T takes journalctl's forms:
//     "2026-12-01 10:00[:SS]", "2026-12-01" (midnight), "10:00[:SS]" (today), "now",
//     "today", "yesterday", "tomorrow", "-1h" / "+30min" / "-2d" / "-1w" (from now: a
//     ParseSpan span), "@SECONDS" (since the epoch),
//   in the local time zone. Every filter given must hold (they combine with AND).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <boost/program_options.hpp>

#include "atraced/atrace_client.hpp"

namespace atracectl {

// A span in systemd.time(7)'s form, as journalctl --vacuum-time takes it: one or more
// "N unit" ("2h", "1d", "30min", "1h 30min", "1h30min"; units us, ms, s, sec, m, min, h, hr,
// d, w, M (months), y and their long names), in microseconds; nullopt when it is not one (no
// unit, an unknown unit, over a century).
std::optional<int64_t> ParseSpan(const std::string& span);

// A size as journalctl --vacuum-size takes it: bytes, or a number with K, M, G, T, P or E
// (powers of 1024), a B after either allowed ("500M", "2G", "4096"); nullopt when it is not one
// or passes 2^64.
std::optional<uint64_t> ParseSize(const std::string& text);

// A time spec as microseconds since the epoch; nullopt with `why` when it is not one.
// `now_us` is "now" (a parameter, for tests and for one "now" per command).
std::optional<int64_t> ParseTimeSpec(const std::string& spec, int64_t now_us, std::string* why);

struct ListFilter {
  std::optional<int32_t> pid;
  std::optional<uint32_t> uid;
  std::optional<std::string> comm;  // the program, exactly (an unrecorded one matches nothing)
  std::optional<std::string> job;   // the job label, exactly (a directory without one matches nothing)
  std::optional<std::string> rank;  // the rank label, exactly
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
