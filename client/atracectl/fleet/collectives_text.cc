#include "fleet/collectives_text.h"

#include <algorithm>
#include <set>

#include "common/escape.h"
#include "fleet/fleet_groups.h"

namespace atracectl {

namespace proto = atraced::proto;

namespace {

constexpr size_t kMissingListed = 4096;  // ranks in --json's missing list (missing_count says all)

std::string Ints(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

std::string Ranks(const std::vector<int64_t>& sorted) {
  return (sorted.size() == 1 ? "rank " : "ranks ") + RankRanges(sorted);
}

std::string Ranges(const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::string out;
  for (const auto& [a, b] : ranges) out += (out.empty() ? "" : ",") + std::to_string(a) + (a == b ? "" : "-" + std::to_string(b));
  return out;
}

std::string CommName(const CommReport& c) { return TerminalLine(c.name) + (c.name_cut ? "...(cut)" : ""); }

std::string Completed(const CommClass& k, bool tracked) {
  if (!tracked) return "";
  return k.last_completed ? ", completed #" + std::to_string(*k.last_completed) : ", none completed";
}

std::vector<size_t> StackClasses(const std::vector<int64_t>& ranks, const StackClassOf& of) {
  std::set<size_t> s;
  for (int64_t r : ranks) {
    auto it = of.find(r);
    if (it != of.end()) s.insert(it->second);
  }
  return {s.begin(), s.end()};
}

std::string StackNote(const std::vector<int64_t>& ranks, const StackClassOf& of) {
  const auto s = StackClasses(ranks, of);
  if (s.empty()) return "";
  std::string out = s.size() == 1 ? "  [stack S" : "  [stacks S";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ",S" : "") + std::to_string(s[i] + 1);
  return out + "]";
}

std::string DtypeName(uint8_t t) { return t == 255 ? "" : proto::HcclDataTypeName(t); }
std::string ReduceName(const proto::LedgerRecord& r) {
  return proto::LedgerOpHasReduce(r.op) && r.reduce_op != 255 ? proto::HcclReduceOpName(r.reduce_op) : "";
}
std::string JsonOrNull(const std::string& s) { return s.empty() ? "null" : JsonString(s); }
// Where a class's or mismatch's numbers come from.
std::string Source(bool from_hccl_records) { return from_hccl_records ? "\"hccl_records\"" : "\"ledger\""; }

}  // namespace

StackClassOf StackClassIndex(const FleetReport& r) {
  StackClassOf of;
  for (size_t i = 0; i < r.classes.size(); ++i) {
    for (int64_t rank : r.classes[i].ranks) of[rank] = i;
  }
  return of;
}

std::string ElementCount(uint64_t count) {
  static const char* const kUnits[] = {"Ki", "Mi", "Gi", "Ti"};
  if (count < 1024 || count % 1024 != 0) return std::to_string(count);
  size_t unit = 0;
  count /= 1024;
  while (unit + 1 < std::size(kUnits) && count >= 1024 && count % 1024 == 0) count /= 1024, ++unit;
  return std::to_string(count) + " " + kUnits[unit];
}

std::string CallText(const proto::LedgerRecord& r) {
  std::string s = "#" + std::to_string(r.comm_seq) + " " + proto::LedgerOpName(r.op);
  std::vector<std::string> parts;
  if (r.op != ATR_LEDGER_OP_BARRIER) {
    std::string n = ElementCount(r.count);
    if (!DtypeName(r.data_type).empty()) n += " " + DtypeName(r.data_type);
    parts.push_back(n);
  }
  if (!ReduceName(r).empty()) parts.push_back(ReduceName(r));
  if (r.peer) {
    const bool p2p = r.op == ATR_LEDGER_OP_SEND || r.op == ATR_LEDGER_OP_RECV;
    parts.push_back((p2p ? "peer " : "root ") + std::to_string(*r.peer));
  }
  if (parts.empty()) return s;
  s += " (";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + ")";
}

std::string CollectivesText(const CollectivesReport& r, const StackClassOf& stack_class) {
  if (!r.any_ledger && r.no_ledger.empty() && r.unreadable.empty() && r.notes.empty()) return "";
  if (!r.any_ledger && r.unreadable.empty() && r.refused == 0) {
    return "Collectives: no rank has a collective ledger (run the ranks under LD_PRELOAD=libatrace_hccl.so to see "
           "where each is in its HCCL communicators).\n";
  }
  std::string o = "Collectives (each rank's ledger of HCCL calls):\n";
  if (r.stuck) {
    const CommReport& s = r.comms[*r.stuck];
    uint64_t top = 0;
    for (const CommClass& k : s.classes) {
      if (OfBehindSource(s, k)) top = std::max(top, k.last_enqueued);
    }
    std::vector<int64_t> ahead;
    uint64_t low = UINT64_MAX;
    for (const CommClass& k : s.classes) {
      if (!OfBehindSource(s, k)) continue;
      low = std::min(low, k.last_enqueued);
      if (k.last_enqueued == top) ahead.insert(ahead.end(), k.ranks.begin(), k.ranks.end());
    }
    std::sort(ahead.begin(), ahead.end());
    o += "Behind: " + Ranks(r.culprits) + " in comm " + CommName(s) + " (last entered #" + std::to_string(low) +
         ", where " + Ranks(ahead) + " entered #" + std::to_string(top) +
         (s.behind_from_hccl_records ? "; from HCCL's own records, # is HCCL's record index" : "") + ")";
    for (size_t w : r.waiting) o += (w == r.waiting.front() ? "; waiting on it: comm " : ", comm ") + CommName(r.comms[w]);
    o += "\n";
  } else if (r.any_ledger) {
    o += "No communicator has ranks at different calls";
    o += r.no_ledger.empty() && r.unreadable.empty() ? ".\n" : " among the ranks with a ledger.\n";
  }
  for (size_t i = 0; i < r.comms.size(); ++i) {
    const CommReport& c = r.comms[i];
    o += "  comm " + CommName(c) + " (size " + std::to_string(c.size);
    if (c.size_bounded) o += ", claims " + std::to_string(c.size_claimed) + ": bounded by the ranks seen";
    if (c.sizes_disagree) o += ", its ranks claim different sizes";
    o += ")";
    if (r.stuck && i == *r.stuck) o += ": stuck here";
    if (std::find(r.waiting.begin(), r.waiting.end(), i) != r.waiting.end()) o += ": waits on comm " + CommName(r.comms[*r.stuck]);
    if (!c.completion_tracked) o += " (enqueues only: completion not tracked on every rank)";
    o += "\n";
    for (const CommClass& k : c.classes) {
      o += "    " + Ranks(k.ranks) + " (" + std::to_string(k.ranks.size()) + "): last entered " + CallText(k.call) +
           Completed(k, c.completion_tracked) + (k.from_hccl_records ? ", from HCCL's own records" : "") +
           StackNote(k.ranks, stack_class) + "\n";
    }
    if (c.missing_count != 0) {
      o += "    missing: its rank" + std::string(c.missing_count == 1 ? " " : "s ") + Ranges(c.missing) +
           " (no ledger names them: no dump, no ledger, or not in this communicator's bundles)\n";
    }
    for (uint32_t cr : c.rank_conflicts) {
      o += "    conflict: its rank " + std::to_string(cr) + " is claimed by more than one job rank\n";
    }
    for (const CommMismatch& m : c.mismatches) {
      o += "    mismatch at #" + std::to_string(m.seq) + (m.from_hccl_records ? " (HCCL's record index)" : "") + ", " +
           m.field + ":";
      for (size_t v = 0; v < m.values.size(); ++v) {
        o += (v ? "; " : " ") + Ranks(m.values[v].ranks) + " called " + TerminalLine(m.values[v].value);
      }
      o += "\n";
    }
    if (c.mismatches_more != 0) o += "    (" + std::to_string(c.mismatches_more) + " further mismatches not shown)\n";
  }
  if (r.comms_more != 0) o += "  (" + std::to_string(r.comms_more) + " further communicators not shown)\n";
  if (!r.no_ledger.empty()) {
    o += "  Without a ledger: " + Ranks(r.no_ledger) + " (not under LD_PRELOAD=libatrace_hccl.so, or no save of theirs in "
         "the bundles)\n";
  }
  if (!r.from_hccl_records.empty()) {
    o += "  From HCCL's own atrace records, without a ledger: " + Ranks(r.from_hccl_records) +
         " (# is HCCL's record index, an entry and a success record per call: compared among these ranks only)";
    if (r.hccl_records_skipped != 0) {
      o += "; " + std::to_string(r.hccl_records_skipped) + " record(s) that did not read were skipped";
    }
    o += "\n";
  }
  if (!r.unreadable.empty()) o += "  Unreadable ledger: " + Ranks(r.unreadable) + "\n";
  for (const RankNote& n : r.notes) {
    o += "  rank " + std::to_string(n.rank) + " (" + TerminalLine(n.host) + ", pid " + std::to_string(n.pid) + "): " + n.what + "\n";
  }
  return o;
}

std::string CommunicatorsJson(const CollectivesReport& r, const StackClassOf& stack_class) {
  std::string o = "[";
  for (size_t i = 0; i < r.comms.size(); ++i) {
    const CommReport& c = r.comms[i];
    o += std::string(i ? "," : "") + "{\"name\":" + JsonString(c.name) + ",\"name_cut\":" + (c.name_cut ? "true" : "false") +
         ",\"size\":" + std::to_string(c.size) + ",\"size_claimed\":" + std::to_string(c.size_claimed) +
         ",\"size_bounded\":" + (c.size_bounded ? "true" : "false") + ",\"stuck\":" +
         (r.stuck && i == *r.stuck ? "true" : "false") + ",\"waits_on\":" +
         (std::find(r.waiting.begin(), r.waiting.end(), i) != r.waiting.end() ? JsonString(r.comms[*r.stuck].name)
                                                                               : std::string("null")) +
         ",\"completion_tracked\":" + (c.completion_tracked ? "true" : "false") + ",\"classes\":[";
    for (size_t k = 0; k < c.classes.size(); ++k) {
      const CommClass& cl = c.classes[k];
      std::vector<int64_t> stacks;
      for (size_t s : StackClasses(cl.ranks, stack_class)) stacks.push_back(static_cast<int64_t>(s));
      o += std::string(k ? "," : "") + "{\"ranks\":" + Ints(cl.ranks) + ",\"ranges\":" + JsonString(RankRanges(cl.ranks)) +
           ",\"last_enqueued\":" + std::to_string(cl.last_enqueued) + ",\"last_completed\":" +
           (cl.last_completed ? std::to_string(*cl.last_completed) : std::string("null")) +
           ",\"op\":" + JsonString(proto::LedgerOpName(cl.call.op)) + ",\"count\":" + std::to_string(cl.call.count) +
           ",\"dtype\":" + JsonOrNull(DtypeName(cl.call.data_type)) + ",\"reduce\":" + JsonOrNull(ReduceName(cl.call)) +
           ",\"root\":" + (cl.call.peer ? std::to_string(*cl.call.peer) : std::string("null")) +
           ",\"stack_classes\":" + Ints(stacks) + ",\"source\":" + Source(cl.from_hccl_records) + "}";
    }
    o += "],\"missing\":[";
    uint64_t listed = 0;
    for (const auto& [a, b] : c.missing) {
      for (uint64_t m = a; m <= b && listed < kMissingListed; ++m, ++listed) o += (listed ? "," : "") + std::to_string(m);
    }
    o += "],\"missing_ranges\":" + JsonString(Ranges(c.missing)) + ",\"missing_count\":" + std::to_string(c.missing_count) +
         ",\"rank_conflicts\":[";
    for (size_t k = 0; k < c.rank_conflicts.size(); ++k) o += (k ? "," : "") + std::to_string(c.rank_conflicts[k]);
    o += "],\"mismatches\":[";
    for (size_t k = 0; k < c.mismatches.size(); ++k) {
      const CommMismatch& m = c.mismatches[k];
      o += std::string(k ? "," : "") + "{\"seq\":" + std::to_string(m.seq) + ",\"field\":" + JsonString(m.field) +
           ",\"ranks\":" + Ints(m.ranks) + ",\"values\":[";
      for (size_t v = 0; v < m.values.size(); ++v) {
        o += std::string(v ? "," : "") + "{\"value\":" + JsonString(m.values[v].value) + ",\"ranks\":" + Ints(m.values[v].ranks) + "}";
      }
      o += "],\"source\":" + Source(m.from_hccl_records) + "}";
    }
    o += "],\"mismatches_more\":" + std::to_string(c.mismatches_more) + "}";
  }
  return o + "]";
}

std::string CollectivesJsonMembers(const CollectivesReport& r) {
  std::string o = "\"collective_culprits\":" + Ints(r.culprits) + ",\"ranks_without_ledger\":" + Ints(r.no_ledger) +
                  ",\"ranks_with_unreadable_ledger\":" + Ints(r.unreadable) +
                  ",\"ranks_from_hccl_records\":" + Ints(r.from_hccl_records) +
                  ",\"hccl_records_skipped\":" + std::to_string(r.hccl_records_skipped) +
                  ",\"communicators_more\":" + std::to_string(r.comms_more) + ",\"ledger_notes\":[";
  for (size_t i = 0; i < r.notes.size(); ++i) {
    o += std::string(i ? "," : "") + "{\"rank\":" + std::to_string(r.notes[i].rank) + ",\"host\":" + JsonString(r.notes[i].host) +
         ",\"pid\":" + std::to_string(r.notes[i].pid) + ",\"what\":" + JsonString(r.notes[i].what) + "}";
  }
  return o + "]";
}

}  // namespace atracectl
