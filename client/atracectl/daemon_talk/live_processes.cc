#include "daemon_talk/live_processes.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <sstream>
#include <tuple>

#include "common/escape.h"
#include "common/format.h"
#include "daemon_talk/list_columns.h"

namespace atracectl {
namespace {

// A rank label as a number for ordering (a label is 0..2^31-1 or empty; empty sorts last).
int64_t RankOrder(const std::string& rank) {
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), n);
  return rank.empty() || ec != std::errc() ? INT64_MAX : n;
}

std::string Dash(const std::string& value) { return value.empty() ? "-" : TerminalLine(value); }
std::string JsonOrNull(const std::string& value) { return value.empty() ? "null" : JsonString(value); }

}  // namespace

atraced::Status FetchLive(atrace::Client& client, const std::string& job, LiveListing* out) {
  std::error_code ec = client.ListLive(job, &out->entries, &out->omitted);
  if (ec == std::errc::not_supported) {
    return atraced::Status::Error(ENOTSUP, "the daemon does not list live processes (an atraced older than this "
                                           "atracectl): `atracectl dump --job J` still saves them");
  }
  if (ec) {
    const std::string daemon = client.last_message();
    return atraced::Status::Error(ec.value(), std::string(atrace_client_strerror(-ec.value())) +
                                                  (daemon.empty() ? "" : " (daemon: " + TerminalLine(daemon) + ")"));
  }
  std::sort(out->entries.begin(), out->entries.end(), [](const auto& a, const auto& b) {
    return std::tuple(a.job, RankOrder(a.rank), a.pid) < std::tuple(b.job, RankOrder(b.rank), b.pid);
  });
  return atraced::Status::Ok();
}

std::string LiveState(const atrace::Client::LiveEntry& e) {
  if (!(e.flags & ATRACE_LIVE_WATCHED)) return "not watched";
  if (e.flags & ATRACE_LIVE_STALLED) return (e.flags & ATRACE_LIVE_BUSY) ? "stalled busy" : "stalled blocked";
  if (e.flags & ATRACE_LIVE_CAPTURED) return "dumped with its job";
  if (e.flags & ATRACE_LIVE_NEVER_WROTE) return "no record yet";
  return "running";
}

// LAST RECORD is when the daemon last saw a ring of the process advance (its 2 s look), in
// local time; STILL how long none has since; TIMEOUT the hang timeout it is judged by.
std::string LiveText(const LiveListing& listing) {
  std::ostringstream o;
  o << "PID\tUID\tCOMM\tJOB\tRANK\tSIZE\tRINGS\tLAST RECORD\tSTILL\tTIMEOUT\tSTATE\n";
  for (const auto& e : listing.entries) {
    o << e.pid << "\t" << e.uid << "\t" << Dash(e.comm) << "\t" << Dash(e.job) << "\t" << Dash(e.rank) << "\t"
      << Dash(e.world_size) << "\t" << e.rings << "\t"
      << (e.last_moved_unix_us ? LocalTimeColumn(e.last_moved_unix_us) : std::string("-")) << "\t"
      << (e.last_moved_unix_us ? HumanAge(e.still_ms / 1000) : std::string("-")) << "\t"
      << (e.timeout_ms ? HumanAge(e.timeout_ms / 1000) : std::string("-")) << "\t" << LiveState(e) << "\n";
  }
  return o.str();
}

std::string LiveJson(const LiveListing& listing) {
  std::ostringstream o;
  o << "{\"processes\":[";
  for (size_t i = 0; i < listing.entries.size(); ++i) {
    const auto& e = listing.entries[i];
    const bool known = e.last_moved_unix_us != 0;
    o << (i ? "," : "") << "{\"pid\":" << e.pid << ",\"uid\":" << e.uid << ",\"comm\":" << JsonOrNull(e.comm)
      << ",\"job\":" << JsonOrNull(e.job) << ",\"rank\":" << (e.rank.empty() ? "null" : e.rank)
      << ",\"world_size\":" << (e.world_size.empty() ? "null" : e.world_size) << ",\"rings\":" << e.rings
      << ",\"last_record_unix_us\":" << (known ? std::to_string(e.last_moved_unix_us) : "null")
      << ",\"still_ms\":" << (known ? std::to_string(e.still_ms) : "null")
      << ",\"hang_timeout_ms\":" << (e.timeout_ms ? std::to_string(e.timeout_ms) : "null")
      << ",\"state\":" << JsonString(LiveState(e)) << "}";
  }
  o << "],\"omitted\":" << listing.omitted << "}\n";
  return o.str();
}

}  // namespace atracectl
