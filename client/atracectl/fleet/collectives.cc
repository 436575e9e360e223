#include "fleet/collectives.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "fleet/job_uid.h"

namespace atracectl {

namespace proto = atraced::proto;

namespace {

std::string UidText(const std::optional<uint32_t>& uid) { return uid ? "uid " + std::to_string(*uid) : "uid ?"; }

// Point-to-point calls name their own peer and size, and the V variants their own count:
// those fields differ between ranks by design.
bool PointToPoint(uint16_t op) {
  return op == ATR_LEDGER_OP_SEND || op == ATR_LEDGER_OP_RECV || op == ATR_LEDGER_OP_BATCH_SEND_RECV;
}
bool PerRankCount(uint16_t op) {
  return PointToPoint(op) || op == ATR_LEDGER_OP_ALL_GATHER_V || op == ATR_LEDGER_OP_REDUCE_SCATTER_V ||
         op == ATR_LEDGER_OP_ALL_TO_ALL_V || op == ATR_LEDGER_OP_ALL_TO_ALL_VC || op == ATR_LEDGER_OP_ALL_TO_ALL;
}

struct Member {
  int64_t rank;
  const CommLedger* comm;
};

void FindMismatches(const std::vector<Member>& members, CommReport* out) {
  // (source, seq) -> (job rank, its call), each rank once per seq: a ledger's numbers and
  // HCCL's record index are not compared.
  std::map<std::pair<bool, uint64_t>, std::map<int64_t, const proto::LedgerRecord*>> by_seq;
  for (const Member& m : members) {
    const bool hccl = m.comm->from_hccl_records;
    for (const proto::LedgerRecord& r : m.comm->recent) by_seq[{hccl, r.comm_seq}].emplace(m.rank, &r);
    by_seq[{hccl, m.comm->last_entered.comm_seq}].emplace(m.rank, &m.comm->last_entered);
  }
  using Field = std::pair<const char*, std::string (*)(const proto::LedgerRecord&)>;
  static const Field kFields[] = {
      {"op", [](const proto::LedgerRecord& r) { return proto::LedgerOpName(r.op); }},
      {"count", [](const proto::LedgerRecord& r) { return std::to_string(r.count); }},
      {"dtype",
       [](const proto::LedgerRecord& r) {
         return r.data_type == 255 ? std::string("none") : proto::HcclDataTypeName(r.data_type);
       }},
      {"reduce",
       [](const proto::LedgerRecord& r) {
         return proto::LedgerOpHasReduce(r.op) && r.reduce_op != 255 ? proto::HcclReduceOpName(r.reduce_op)
                                                                     : std::string("none");
       }},
      {"root", [](const proto::LedgerRecord& r) { return r.peer ? std::to_string(*r.peer) : std::string("none"); }},
  };
  for (const auto& [key, calls] : by_seq) {
    if (calls.size() < 2) continue;
    bool p2p = false, all_p2p = true, per_rank_count = false;
    for (const auto& [rank, r] : calls) {
      p2p = p2p || PointToPoint(r->op);
      all_p2p = all_p2p && PointToPoint(r->op);
      per_rank_count = per_rank_count || PerRankCount(r->op);
    }
    if (all_p2p) continue;  // a Send meets a Recv, each with its own peer and count
    for (const auto& [field, value_of] : kFields) {
      const std::string_view f = field;
      if (f != "op" && p2p) continue;  // a collective met by a point-to-point call: the op says it
      if (f == "count" && per_rank_count) continue;
      std::map<std::string, std::vector<int64_t>> values;
      for (const auto& [rank, r] : calls) values[value_of(*r)].push_back(rank);
      if (values.size() < 2) continue;
      if (out->mismatches.size() == kMaxMismatches) {
        ++out->mismatches_more;
        continue;
      }
      CommMismatch m;
      m.seq = key.second;
      m.from_hccl_records = key.first;
      m.field = field;
      for (auto& [value, ranks] : values) m.values.push_back({value, std::move(ranks)});
      // The most common value first (ties: the one its lowest rank holds).
      std::stable_sort(m.values.begin(), m.values.end(), [](const auto& a, const auto& b) {
        return a.ranks.size() != b.ranks.size() ? a.ranks.size() > b.ranks.size() : a.ranks.front() < b.ranks.front();
      });
      for (size_t i = 1; i < m.values.size(); ++i) m.ranks.insert(m.ranks.end(), m.values[i].ranks.begin(), m.values[i].ranks.end());
      std::sort(m.ranks.begin(), m.ranks.end());
      out->mismatches.push_back(std::move(m));
    }
  }
}

CommReport AnalyzeComm(const std::string& name, const std::vector<Member>& members, std::optional<int64_t> world_size) {
  CommReport c;
  c.name = name;
  c.completion_tracked = true;
  std::map<uint32_t, size_t> size_votes;
  std::map<uint32_t, std::vector<int64_t>> by_comm_rank;
  for (const Member& m : members) {
    c.name_cut = c.name_cut || m.comm->name_cut;
    c.completion_tracked = c.completion_tracked && m.comm->completion_tracked;
    if (m.comm->rank_only) by_comm_rank[m.comm->rank].push_back(m.rank);
    if (!m.comm->rank_known) continue;
    ++size_votes[m.comm->size];
    by_comm_rank[m.comm->rank].push_back(m.rank);
  }
  size_t best = 0;
  for (const auto& [size, n] : size_votes) {
    if (n > best) c.size = size, best = n;  // ties: the smaller size (map order)
  }
  c.sizes_disagree = size_votes.size() > 1;
  c.size_claimed = c.size;
  const uint64_t seen_top = by_comm_rank.empty() ? 0 : uint64_t{by_comm_rank.rbegin()->first} + 1;
  // A communicator is no larger than its job; without a world size, past kMaxCommSize, only
  // the ranks seen count (a hostile size must not make a list of four billion missing ranks).
  const bool world = world_size && *world_size > 0 && static_cast<uint64_t>(*world_size) <= kMaxCommSize;
  const uint64_t plausible = world ? static_cast<uint64_t>(*world_size) : kMaxCommSize;
  if (c.size > plausible && c.size > seen_top) {
    c.size_bounded = true;
    c.size = static_cast<uint32_t>(std::max<uint64_t>(seen_top, world ? plausible : 0));
  }
  // Missing: the gaps of the ranks seen below the size, as ranges.
  uint64_t next = 0;
  for (const auto& [comm_rank, job_ranks] : by_comm_rank) {
    if (job_ranks.size() > 1) c.rank_conflicts.push_back(comm_rank);
    if (comm_rank >= c.size) continue;
    if (comm_rank > next) c.missing.emplace_back(next, comm_rank - 1), c.missing_count += comm_rank - next;
    next = uint64_t{comm_rank} + 1;
  }
  if (next < c.size) c.missing.emplace_back(next, c.size - 1), c.missing_count += c.size - next;

  std::map<std::tuple<bool, uint64_t, std::optional<uint64_t>>, CommClass> classes;
  for (const Member& m : members) {
    CommClass& k = classes[{m.comm->from_hccl_records, m.comm->last_entered.comm_seq, m.comm->last_completed}];
    if (k.ranks.empty()) {
      k.last_enqueued = m.comm->last_entered.comm_seq;
      k.last_completed = m.comm->last_completed;
      k.call = m.comm->last_entered;
      k.from_hccl_records = m.comm->from_hccl_records;
    }
    k.ranks.push_back(m.rank);
  }
  std::set<uint64_t> entered[2];  // by source: ledger, HCCL's records
  for (auto& [key, k] : classes) {
    entered[k.from_hccl_records].insert(k.last_enqueued);
    c.classes.push_back(std::move(k));
  }
  std::stable_sort(c.classes.begin(), c.classes.end(), [](const CommClass& a, const CommClass& b) {
    return a.ranks.size() != b.ranks.size() ? a.ranks.size() < b.ranks.size() : a.last_enqueued < b.last_enqueued;
  });
  c.behind = entered[0].size() > 1 || entered[1].size() > 1;
  c.behind_from_hccl_records = entered[0].size() <= 1 && entered[1].size() > 1;
  FindMismatches(members, &c);
  return c;
}

}  // namespace

bool OfBehindSource(const CommReport& c, const CommClass& k) { return k.from_hccl_records == c.behind_from_hccl_records; }

CollectivesReport AnalyzeCollectives(const std::vector<RankLedger>& ranks, std::optional<int64_t> world_size) {
  CollectivesReport out;
  std::map<int64_t, std::vector<const RankLedger*>> by_rank;
  for (const RankLedger& r : ranks) by_rank[r.rank].push_back(&r);
  out.job_uid = JobUid(by_rank);

  // The claim used for each rank; its ledger's communicators by name (first seen first).
  std::vector<std::string> names;
  std::map<std::string, std::vector<Member>> members;
  for (const auto& [rank, claims] : by_rank) {
    const RankLedger* used = claims.front();
    if (claims.size() > 1) {
      used = nullptr;
      size_t of_job = 0;
      for (const RankLedger* c : claims) {
        if (out.job_uid && c->uid == out.job_uid) used = c, ++of_job;
      }
      if (of_job != 1) used = nullptr;
      // Said here only where a claimant has a ledger (hang's stack part names every conflict).
      bool any_ledger = false;
      for (const RankLedger* c : claims) any_ledger = any_ledger || c->ledger == RankLedger::Ledger::kRead;
      for (const RankLedger* c : any_ledger ? claims : std::vector<const RankLedger*>{}) {
        out.notes.push_back({rank,
                             "claimed by " + std::to_string(claims.size()) + " processes; this one (" + UidText(c->uid) +
                                 ") " + (c == used ? "is used (the job's uid)" : "is left out"),
                             c->host, c->pid});
      }
      if (used == nullptr) continue;
    }
    if (used->from_hccl_records) out.from_hccl_records.push_back(rank);
    out.hccl_records_skipped += used->hccl_records_skipped;
    if (used->ledger == RankLedger::Ledger::kNone) {
      out.no_ledger.push_back(rank);
      continue;
    }
    if (used->ledger == RankLedger::Ledger::kUnreadable) {
      out.unreadable.push_back(rank);
      continue;
    }
    if (used->uid && used->evidence_uid && *used->uid != *used->evidence_uid) {
      out.notes.push_back({rank,
                           "ledger written by " + UidText(used->uid) + ", its stacks by " + UidText(used->evidence_uid) +
                               ": the ledger is not used",
                           used->host, used->pid});
      ++out.refused;
      continue;
    }
    out.any_ledger = true;
    for (const CommLedger& c : used->comms) {
      auto [it, added] = members.try_emplace(c.name);
      if (added) {
        if (names.size() == kMaxReportedComms) {
          members.erase(it);
          ++out.comms_more;
          continue;
        }
        names.push_back(c.name);
      }
      // A ledger naming one communicator twice (summaries keep each instance): the latest call.
      const int64_t job_rank = rank;  // a structured binding is not captured (C++20 before P1091 in clang 14)
      auto same = std::find_if(it->second.begin(), it->second.end(), [&](const Member& m) { return m.rank == job_rank; });
      if (same == it->second.end()) {
        it->second.push_back({job_rank, &c});
      } else if (c.last_entered.index > same->comm->last_entered.index) {
        same->comm = &c;
      }
    }
  }
  std::vector<CommReport> comms;
  for (const std::string& name : names) comms.push_back(AnalyzeComm(name, members[name], world_size));

  // The stuck communicator: the smallest one whose ranks are not all at the same call.
  std::optional<size_t> stuck;
  for (size_t i = 0; i < comms.size(); ++i) {
    if (!comms[i].behind) continue;
    if (!stuck || comms[i].size < comms[*stuck].size ||
        (comms[i].size == comms[*stuck].size && comms[i].name < comms[*stuck].name)) {
      stuck = i;
    }
  }
  std::vector<size_t> order, waiting;
  if (stuck) {
    const CommReport& s = comms[*stuck];
    uint64_t low = UINT64_MAX;
    std::set<int64_t> in_stuck;
    for (const CommClass& k : s.classes) {
      if (OfBehindSource(s, k)) low = std::min(low, k.last_enqueued);
      in_stuck.insert(k.ranks.begin(), k.ranks.end());
    }
    for (const CommClass& k : s.classes) {
      if (OfBehindSource(s, k) && k.last_enqueued == low) out.culprits.insert(out.culprits.end(), k.ranks.begin(), k.ranks.end());
    }
    std::sort(out.culprits.begin(), out.culprits.end());
    order.push_back(*stuck);
    // Waiting on it: a communicator behind whose ranks behind are all in the stuck one.
    for (size_t i = 0; i < comms.size(); ++i) {
      if (i == *stuck || !comms[i].behind) continue;
      uint64_t top = 0;
      for (const CommClass& k : comms[i].classes) {
        if (OfBehindSource(comms[i], k)) top = std::max(top, k.last_enqueued);
      }
      bool all_in = true;
      for (const CommClass& k : comms[i].classes) {
        if (!OfBehindSource(comms[i], k) || k.last_enqueued == top) continue;
        for (int64_t r : k.ranks) all_in = all_in && in_stuck.count(r) != 0;
      }
      if (all_in) waiting.push_back(i);
    }
    order.insert(order.end(), waiting.begin(), waiting.end());
  }
  std::vector<size_t> rest;
  for (size_t i = 0; i < comms.size(); ++i) {
    if (std::find(order.begin(), order.end(), i) == order.end()) rest.push_back(i);
  }
  std::stable_sort(rest.begin(), rest.end(), [&](size_t a, size_t b) { return comms[a].name < comms[b].name; });
  order.insert(order.end(), rest.begin(), rest.end());
  for (size_t i : order) out.comms.push_back(std::move(comms[i]));
  if (stuck) {
    out.stuck = 0;
    for (size_t w = 0; w < waiting.size(); ++w) out.waiting.push_back(w + 1);
  }
  return out;
}

}  // namespace atracectl
