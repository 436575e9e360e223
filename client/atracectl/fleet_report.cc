#include "fleet_report.h"

#include <algorithm>

#include "escape.h"
#include "fleet_groups.h"

namespace atracectl {
namespace {

constexpr size_t kMissingShown = 4096;  // characters of the missing ranks' ranges
constexpr size_t kRanksShown = 4096;    // characters of a rank list in text

// The uid most ranks claimed by one process alone share (nullopt when none says, or a tie).
std::optional<uint32_t> JobUid(const std::map<int64_t, std::vector<const RankClaim*>>& by_rank) {
  std::map<uint32_t, size_t> votes;
  for (const auto& [rank, claims] : by_rank) {
    if (claims.size() == 1 && claims.front()->uid) ++votes[*claims.front()->uid];
  }
  std::optional<uint32_t> best;
  size_t best_votes = 0;
  bool tie = false;
  for (const auto& [uid, n] : votes) {
    if (n > best_votes) {
      best = uid, best_votes = n, tie = false;
    } else if (n == best_votes) {
      tie = true;
    }
  }
  return tie ? std::nullopt : best;
}

std::string Ranges(const std::vector<int64_t>& ranks) {
  std::string out = RankRanges(ranks);
  if (out.size() > kRanksShown) out = out.substr(0, out.rfind(',', kRanksShown)) + ",...";
  return out;
}

}  // namespace

std::string JsonInts(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

std::string ClaimantText(const RankClaim& c) {
  return (c.uid ? "uid " + std::to_string(*c.uid) : std::string("uid ?")) + ", " + c.host + ", pid " +
         std::to_string(c.pid);
}

std::string MissingRanges(const std::vector<int64_t>& seen, int64_t world, size_t max_chars, int64_t* count) {
  std::string out;
  *count = 0;
  int64_t next = 0;  // the first rank not yet accounted for
  auto gap = [&](int64_t from, int64_t to) {  // [from, to)
    if (from >= to) return;
    *count += to - from;
    if (out.size() > max_chars) return;
    out += (out.empty() ? "" : ",") + std::to_string(from) + (to - from > 1 ? "-" + std::to_string(to - 1) : "");
    if (out.size() > max_chars) out += ",...";
  };
  for (int64_t r : seen) {
    if (r >= world) break;
    gap(next, r);
    next = std::max(next, r + 1);
  }
  gap(next, world);
  return out;
}

void Classify(const std::vector<RankClaim>& claims, size_t unranked, FleetReport* r) {
  r->unranked = unranked;
  std::map<int64_t, std::vector<const RankClaim*>> by_rank;
  for (const RankClaim& c : claims) by_rank[c.rank].push_back(&c);
  r->job_uid = JobUid(by_rank);
  for (const auto& [rank, claimants] : by_rank) {
    if (claimants.size() == 1) {
      r->ranks[rank] = claimants.front();
      continue;
    }
    RankConflict conflict{rank, claimants, nullptr};
    if (r->job_uid) {
      size_t of_job = 0;
      for (const RankClaim* c : claimants) {
        if (c->uid == r->job_uid) ++of_job, conflict.used = c;
      }
      if (of_job != 1) conflict.used = nullptr;
    }
    if (conflict.used) r->ranks[rank] = conflict.used;
    r->conflicts.push_back(std::move(conflict));
  }
  // The world size: as the processes used say it (the job's uid's when it is known).
  for (const auto& [rank, c] : r->ranks) {
    if (c->world_size && (!r->job_uid || c->uid == r->job_uid)) ++r->world_size_claims[*c->world_size];
  }
  size_t most = 0;
  for (const auto& [value, n] : r->world_size_claims) {
    if (n > most) r->world_size = value, most = n;  // a tie: the smaller
  }
  for (const auto& [rank, c] : r->ranks) r->seen.push_back(rank);
  if (r->world_size) r->missing = MissingRanges(r->seen, *r->world_size, kMissingShown, &r->missing_count);

  // Classes by the main thread's stack (the thread whose tid is the pid, else the first).
  std::map<std::vector<std::string>, std::vector<int64_t>> by_stack;
  for (const auto& [rank, c] : r->ranks) {
    if (c->stacks.empty()) {
      r->no_stacks.push_back(rank);
      continue;
    }
    const ThreadStack* main = &c->stacks.front();
    for (const ThreadStack& t : c->stacks) {
      if (t.tid == c->pid) main = &t;
      r->tree.Add(rank, t.frames);
    }
    by_stack[main->frames].push_back(rank);
  }
  for (auto& [stack, ranks] : by_stack) r->classes.push_back({stack, ranks});
  std::stable_sort(r->classes.begin(), r->classes.end(), [](const StackClass& a, const StackClass& b) {
    return a.ranks.size() != b.ranks.size() ? a.ranks.size() < b.ranks.size() : a.ranks.front() < b.ranks.front();
  });
  if (r->classes.size() > 1) {
    for (const StackClass& c : r->classes) {
      if (c.ranks.size() == r->classes.front().ranks.size()) r->culprits.insert(r->culprits.end(), c.ranks.begin(), c.ranks.end());
    }
    std::sort(r->culprits.begin(), r->culprits.end());
  }
  // The ranks whose latest record (over every tracer) is the oldest; records without a time
  // (the journal's) are not compared.
  std::map<int64_t, int64_t> latest;
  for (const auto& [rank, c] : r->ranks) {
    for (const auto& [tracer, rec] : c->last) {
      if (rec.ts == INT64_MIN) continue;
      auto [it, added] = latest.try_emplace(rank, rec.ts);
      if (!added) it->second = std::max(it->second, rec.ts);
    }
  }
  if (latest.size() > 1) {
    int64_t min_ts = INT64_MAX;
    for (const auto& [rank, ts] : latest) min_ts = std::min(min_ts, ts);
    for (const auto& [rank, ts] : latest) {
      if (ts == min_ts) r->oldest.push_back(rank);
    }
  }
}

std::string SeenText(const FleetReport& r, const std::string& where_missing) {
  std::string o = "Ranks seen: " + (r.seen.empty() ? std::string("none") : Ranges(r.seen)) +
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
  if (r.missing_count) {
    o += "Missing ranks: " + r.missing + " (" + std::to_string(r.missing_count) + "): expected by the world size, " +
         where_missing + "\n";
  }
  return o;
}

std::string ClassesText(const FleetReport& r) {
  std::string o = "Classes by the main thread's stack, smallest first:\n";
  for (const StackClass& c : r.classes) {
    o += "  ranks " + Ranges(c.ranks) + " (" + std::to_string(c.ranks.size()) + "): ";
    for (size_t f = 0; f < c.stack.size() && f < 6; ++f) o += (f ? " < " : "") + TerminalLine(c.stack[f]);
    if (c.stack.size() > 6) o += " < ...";
    o += "\n";
  }
  if (!r.culprits.empty()) {
    o += "Likely culprits: ranks " + Ranges(r.culprits) + ": their main thread is somewhere the others' are not.\n";
  } else if (r.classes.size() == 1) {
    o += "Every rank with stacks has its main thread in the same place.\n";
  }
  return o;
}

std::string SharedJson(const FleetReport& r) {
  std::string o = "\"ranks_expected\":" +
                  (r.world_size ? JsonString(*r.world_size > 1 ? "0-" + std::to_string(*r.world_size - 1) : "0") : "null");
  o += ",\"world_size\":" + (r.world_size ? std::to_string(*r.world_size) : std::string("null")) + ",\"world_size_claims\":{";
  bool first = true;
  for (const auto& [value, n] : r.world_size_claims) {
    o += std::string(first ? "" : ",") + "\"" + std::to_string(value) + "\":" + std::to_string(n);
    first = false;
  }
  o += "},\"job_uid\":" + (r.job_uid ? std::to_string(*r.job_uid) : std::string("null"));
  o += ",\"ranks_seen\":" + JsonInts(r.seen) + ",\"missing\":" + JsonString(r.missing) +
       ",\"missing_count\":" + std::to_string(r.missing_count) + ",\"conflicts\":[";
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
  o += "],\"outliers\":" + JsonInts(r.culprits) + ",\"no_stacks\":" + JsonInts(r.no_stacks);
  return o;
}

}  // namespace atracectl
