#include "fleet/hang_text.h"

#include <algorithm>
#include <tuple>

#include "common/escape.h"
#include "common/format.h"
#include "fleet/fleet_groups.h"

namespace atracectl {

std::string JsonInts(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

namespace {

constexpr size_t kUnverifiedShown = 64;  // processes listed with unverified stack reports

// What hang did instead of an unverified stack report of `c`.
std::string UnverifiedUse(const FleetReport& r, const RankClaim& c) {
  const auto used = r.ranks.find(c.rank);
  if (used == r.ranks.end() || used->second != &c) return "not the process used for rank " + std::to_string(c.rank);
  return c.stacks.empty() ? "the daemon took no dump of it: rank " + std::to_string(c.rank) + " has no stacks"
                          : "the daemon's own dump of it is used";
}

constexpr size_t kAgedHostShown = 253;  // bytes of a host name in an aged line (a DNS name's most)

// What removed a dump, and what the operator does about it, by the daemon's reason.
struct AgedWhy {
  std::string what, advice;
};
AgedWhy WhyAged(const std::string& reason, bool exported) {
  if (reason == "bytes") {
    return {"by the byte budget (max-use)", "Raise max-use in atraced.conf, or export sooner after a dump"};
  }
  if (reason == "keep-free") {
    return {"by the keep-free guard (its file system was nearly full)",
            "Free space on the trace root's file system or lower keep-free, or export sooner after a dump"};
  }
  if (reason == "count") {
    return exported ? AgedWhy{"by record-num after they were exported", "Read the bundle they were exported into"}
                    : AgedWhy{"by record-num after dump-keep ran out", "Raise dump-keep, or export sooner after a dump"};
  }
  if (reason == "age") return {"by max-age", "Raise max-age, or export sooner after a dump"};
  if (reason == "vacuum") return {"by a vacuum", "Vacuum after the export, not before"};
  return {"(reason " + TerminalLine(reason.substr(0, 16)) + ")", "Export sooner after a dump"};
}

// "Aged ranks" lines: one per (host, reason, exported), its ranks as ranges and its times.
std::string AgedText(const FleetReport& r) {
  struct Group {
    std::vector<int64_t> ranks;
    int64_t first = INT64_MAX, last = INT64_MIN;
  };
  std::map<std::tuple<std::string, std::string, bool>, Group> groups;
  for (const AgedRank& a : r.aged) {
    Group& g = groups[{a.host.substr(0, kAgedHostShown), a.reason.substr(0, 16), a.exported}];
    g.ranks.push_back(a.rank);  // r.aged is by rank: each group's ranks stay sorted
    g.first = std::min(g.first, a.at_us);
    g.last = std::max(g.last, a.at_us);
  }
  std::string o;
  for (const auto& [key, g] : groups) {
    const auto& [host, reason, exported] = key;
    const AgedWhy why = WhyAged(reason, exported);
    o += "Aged ranks: " + RankRanges(g.ranks, kRanksShown) + (host.empty() ? "" : " on " + TerminalLine(host)) +
         ": their dumps were removed " + why.what + " at " + UtcTime(g.first) +
         (g.last != g.first ? " to " + UtcTime(g.last) : "") + (exported ? "" : ", before export") + ". " +
         why.advice + ".\n";
  }
  return o;
}

}  // namespace

std::string SeenText(const FleetReport& r, const std::string& where_missing) {
  std::string o = "Ranks seen: " + (r.seen.empty() ? std::string("none") : RankRanges(r.seen, kRanksShown)) +
                  (r.world_size ? " of " + std::to_string(*r.world_size) + " (world size)"
                                : std::string(" (no world size labelled)")) +
                  "\n";
  if (r.world_size_claims.size() > 1) {
    o += "World sizes labelled:";
    for (const auto& [value, n] : r.world_size_claims) o += " " + std::to_string(value) + " by " + std::to_string(n);
    o += " process(es); the most labelled is used.\n";
  }
  for (const RankConflict& c : r.conflicts) {
    o += "Rank " + std::to_string(c.rank) + " is claimed by " + std::to_string(c.claimants.size()) + " processes:";
    for (size_t k = 0; k < c.claimants.size(); ++k) o += std::string(k ? ";" : "") + " " + TerminalLine(ClaimantText(*c.claimants[k]));
    if (c.used) {
      o += ". Used: " + TerminalLine(ClaimantText(*c.used)) + " (the job's uid " + std::to_string(*r.job_uid) +
           "); the others are left out.\n";
    } else {
      o += ". None is used (no one claimant has the job's uid): the rank is left out of the classes. Look there.\n";
    }
  }
  o += AgedText(r);
  if (r.missing_count) o += "Missing ranks: " + r.missing + ": expected by the world size, " + where_missing + "\n";
  return o;
}

std::string ClassesText(const FleetReport& r) {
  std::string o = "Classes by the main thread's stack, smallest first:\n";
  // Numbered S1, S2, ...: the collectives' class lines name their ranks' stack class so.
  for (size_t i = 0; i < r.classes.size(); ++i) {
    const StackClass& c = r.classes[i];
    o += "  S" + std::to_string(i + 1) + " ranks " + RankRanges(c.ranks, kRanksShown) + " (" +
         std::to_string(c.ranks.size()) + "): ";
    for (size_t f = 0; f < c.stack.size() && f < 6; ++f) o += (f ? " < " : "") + TerminalLine(c.stack[f]);
    if (c.stack.size() > 6) o += " < ...";
    o += "\n";
  }
  if (!r.culprits.empty()) {
    o += "Likely culprits: ranks " + RankRanges(r.culprits, kRanksShown) +
         ": their main thread is somewhere the others' are not.\n";
  } else if (r.classes.size() == 1) {
    o += "Every rank with stacks has its main thread in the same place.\n";
  }
  if (!r.unverified.empty()) {
    o += "Ignored as unverified: stack reports a process wrote into its own directory (not a dump the daemon took), "
         "left out of the classes:\n";
    size_t shown = 0;
    for (const RankClaim* c : r.unverified) {
      if (shown++ == kUnverifiedShown) {
        o += "  ... and " + std::to_string(r.unverified.size() - kUnverifiedShown) + " more process(es)\n";
        break;
      }
      o += "  rank " + std::to_string(c->rank) + " (" + TerminalLine(ClaimantText(*c)) + "): " +
           std::to_string(c->unverified) + " file(s); " + UnverifiedUse(r, *c) + ". Its main thread, by its word: ";
      for (size_t f = 0; f < c->unverified_main.size() && f < 6; ++f) o += (f ? " < " : "") + TerminalLine(c->unverified_main[f]);
      if (c->unverified_main.size() > 6) o += " < ...";
      o += "\n";
    }
  }
  return o;
}

std::string SharedJson(const FleetReport& r) {
  std::string o = "\"ranks_expected\":" +
                  (r.world_size ? JsonString(*r.world_size > 0 ? "0-" + std::to_string(*r.world_size - 1) : "") : "null");
  o += ",\"world_size\":" + (r.world_size ? std::to_string(*r.world_size) : std::string("null")) + ",\"world_size_claims\":{";
  bool first = true;
  for (const auto& [value, n] : r.world_size_claims) {
    o += std::string(first ? "" : ",") + "\"" + std::to_string(value) + "\":" + std::to_string(n);
    first = false;
  }
  o += "},\"job_uid\":" + (r.job_uid ? std::to_string(*r.job_uid) : std::string("null"));
  o += ",\"ranks_seen\":" + JsonInts(r.seen) + ",\"missing\":" + JsonString(r.missing) +
       ",\"missing_count\":" + std::to_string(r.missing_count) + ",\"aged\":[";
  for (size_t i = 0; i < r.aged.size(); ++i) {
    const AgedRank& a = r.aged[i];
    o += std::string(i ? "," : "") + "{\"rank\":" + std::to_string(a.rank) + ",\"host\":" + JsonString(a.host) +
         ",\"reason\":" + JsonString(a.reason) + ",\"at_us\":" + std::to_string(a.at_us) +
         ",\"at\":" + JsonString(UtcTime(a.at_us)) + ",\"exported\":" + (a.exported ? "true" : "false") +
         ",\"uid\":" + (a.uid ? std::to_string(*a.uid) : std::string("null")) + ",\"dir\":" + JsonString(a.dir) + "}";
  }
  o += "],\"conflicts\":[";
  for (size_t i = 0; i < r.conflicts.size(); ++i) {
    const RankConflict& c = r.conflicts[i];
    o += std::string(i ? "," : "") + "{\"rank\":" + std::to_string(c.rank) + ",\"claimants\":[";
    for (size_t k = 0; k < c.claimants.size(); ++k) {
      const RankClaim& who = *c.claimants[k];
      o += std::string(k ? "," : "") + "{\"uid\":" + (who.uid ? std::to_string(*who.uid) : std::string("null")) +
           ",\"host\":" + JsonString(who.host) + ",\"pid\":" + std::to_string(who.pid) +
           ",\"used\":" + (c.used == &who ? "true" : "false") + "}";
    }
    o += "]}";
  }
  o += "],\"classes\":[";
  for (size_t i = 0; i < r.classes.size(); ++i) {
    o += std::string(i ? "," : "") + "{\"ranks\":" + JsonInts(r.classes[i].ranks) +
         ",\"ranges\":" + JsonString(RankRanges(r.classes[i].ranks)) + ",\"count\":" + std::to_string(r.classes[i].ranks.size()) +
         ",\"stack\":[";
    for (size_t f = 0; f < r.classes[i].stack.size(); ++f) o += (f ? "," : "") + JsonString(r.classes[i].stack[f]);
    o += "]}";
  }
  o += "],\"outliers\":" + JsonInts(r.culprits) + ",\"no_stacks\":" + JsonInts(r.no_stacks) + ",\"unverified_stacks\":[";
  for (size_t i = 0; i < r.unverified.size(); ++i) {
    const RankClaim& c = *r.unverified[i];
    const auto used = r.ranks.find(c.rank);
    o += std::string(i ? "," : "") + "{\"rank\":" + std::to_string(c.rank) +
         ",\"uid\":" + (c.uid ? std::to_string(*c.uid) : std::string("null")) + ",\"host\":" + JsonString(c.host) +
         ",\"pid\":" + std::to_string(c.pid) + ",\"files\":" + std::to_string(c.unverified) +
         ",\"used_for_rank\":" + (used != r.ranks.end() && used->second == &c ? "true" : "false") + ",\"main_thread\":[";
    for (size_t f = 0; f < c.unverified_main.size(); ++f) o += (f ? "," : "") + JsonString(c.unverified_main[f]);
    o += "]}";
  }
  o += "]";
  return o;
}

void AppendFirstStoppedText(const std::map<std::string, std::vector<int64_t>>& per_host, size_t max_rank_chars,
                            size_t max_text, std::string* out) {
  *out += "\nFirst to stop recording, per host (each host's own clock; hosts are not compared):\n";
  for (const auto& [host, ranks] : per_host) {
    if (out->size() >= max_text) break;
    *out += "  " + TerminalLine(host) + ": ranks " + RankRanges(ranks, max_rank_chars) + "\n";
  }
}

std::string FirstStoppedJson(const std::map<std::string, std::vector<int64_t>>& per_host) {
  std::string o = "{";
  for (const auto& [host, ranks] : per_host) o += (o.size() > 1 ? "," : "") + JsonString(host) + ":" + JsonInts(ranks);
  return o + "}";
}

}  // namespace atracectl
