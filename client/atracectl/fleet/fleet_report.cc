#include "fleet/fleet_report.h"

#include <algorithm>

#include "fleet/fleet_groups.h"
#include "fleet/job_uid.h"

namespace atracectl {
namespace {

constexpr size_t kMissingShown = 4096;  // characters of the missing ranks' ranges

}  // namespace

std::string ClaimantText(const RankClaim& c) {
  return (c.uid ? "uid " + std::to_string(*c.uid) : std::string("uid ?")) + ", " + c.host + ", pid " +
         std::to_string(c.pid);
}

const ThreadFrames& MainThread(const RankClaim& c) {
  for (const ThreadFrames& t : c.stacks) {
    if (t.tid == c.pid) return t;
  }
  return c.stacks.front();
}

void Classify(const std::vector<RankClaim>& claims, size_t unranked, FleetReport* r) {
  r->unranked = unranked;
  std::map<int64_t, std::vector<const RankClaim*>> by_rank;
  for (const RankClaim& c : claims) {
    by_rank[c.rank].push_back(&c);
    if (c.unverified) r->unverified.push_back(&c);
  }
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
    for (const ThreadFrames& t : c->stacks) r->tree.Add(rank, t.frames);
    by_stack[MainThread(*c).frames].push_back(rank);
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
  // Per host, the ranks whose latest record (over every tracer) is the oldest by that host's clock.
  std::map<std::string, std::map<int64_t, int64_t>> latest;  // host -> rank -> its newest record
  for (const auto& [rank, c] : r->ranks) {
    for (const auto& [tracer, rec] : c->last) {
      if (rec.ts == INT64_MIN) continue;  // the input gave no time
      auto [it, added] = latest[c->host].try_emplace(rank, rec.ts);
      if (!added) it->second = std::max(it->second, rec.ts);
    }
  }
  for (const auto& [host, ranks] : latest) {
    if (ranks.size() < 2) continue;  // one rank alone says nothing of who stopped first
    int64_t min_ts = INT64_MAX;
    for (const auto& [rank, ts] : ranks) min_ts = std::min(min_ts, ts);
    for (const auto& [rank, ts] : ranks) {
      if (ts == min_ts) r->first_stopped[host].push_back(rank);
    }
  }
}

void MarkAged(const std::vector<AgedRank>& aged, FleetReport* r) {
  std::map<int64_t, const AgedRank*> latest;
  for (const AgedRank& a : aged) {
    if (a.rank < 0 || r->ranks.count(a.rank) || (r->world_size && a.rank >= *r->world_size)) continue;
    if (r->job_uid && a.uid && *a.uid != *r->job_uid) continue;  // another user's word of the job's rank
    auto [it, added] = latest.try_emplace(a.rank, &a);
    if (added && latest.size() > kMaxAgedRanks) {
      latest.erase(it);
      continue;
    }
    if (!added && a.at_us >= it->second->at_us) it->second = &a;
  }
  if (latest.empty()) return;
  r->aged.clear();
  for (const auto& [rank, a] : latest) r->aged.push_back(*a);
  if (!r->world_size) return;
  std::vector<int64_t> accounted = r->seen;
  for (const auto& [rank, a] : latest) accounted.push_back(rank);
  std::sort(accounted.begin(), accounted.end());
  r->missing_count = 0;
  r->missing = MissingRanges(accounted, *r->world_size, kMissingShown, &r->missing_count);
}

}  // namespace atracectl
