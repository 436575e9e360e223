#include "journal/journal_report.h"

#include <algorithm>
#include <map>

#include "common/escape.h"
#include "common/shell_words.h"
#include "fleet/collectives_input.h"
#include "fleet/collectives_text.h"
#include "fleet/culprit.h"
#include "fleet/fleet_groups.h"
#include "fleet/hang_text.h"
#include "journal/exec_job.h"
#include "journal/hang_journal_fields.h"

namespace atracectl::journal {
namespace {

// The claims of a job's hang entries, the entries they came from, and their classification.
struct JobView {
  std::vector<RankClaim> claims;
  std::vector<const HangEntry*> entry_of;         // parallel to claims
  std::vector<const HangEntry*> unranked;
  FleetReport report{kDefaultMaxTreeNodes};
  std::vector<RankLedger> ledgers;  // parallel to claims: the communicators its entry carries
  CollectivesReport collectives;
};

// What a hang entry says of the rank's collective ledger, as a bundle's ledger would (the
// daemon read it from the ledger it holds, as atraced's uid; the process is the entry's uid).
RankLedger LedgerOf(const RankClaim& c, const HangEntry& e) {
  RankLedger l;
  l.rank = c.rank;
  l.host = c.host;
  l.pid = c.pid;
  l.uid = e.uid;
  l.evidence_uid = e.uid;
  l.ledger = e.comms.empty() ? RankLedger::Ledger::kNone : RankLedger::Ledger::kRead;
  for (const atraced::proto::CommunicatorJournal& j : e.comms) l.comms.push_back(CommLedgerOf(j.summary, j.completion_tracked));
  return l;
}

void Build(const JobEntries& entries, JobView* v) {
  for (const auto& [key, e] : entries.hangs) {
    if (!e.rank) {
      v->unranked.push_back(&e);
      continue;
    }
    RankClaim c;
    c.rank = *e.rank;
    c.world_size = e.world_size;
    c.uid = e.uid;
    c.host = e.host.empty() ? "?" : e.host;
    c.pid = e.pid;
    c.job = e.job;
    ThreadFrames main;
    main.tid = e.pid;
    for (const std::string& line : e.frames) {
      FramePlace p = PlaceOfFrame(line);
      if (p.function.empty()) continue;
      main.frames.push_back(std::move(p.function));
      main.sources.push_back(std::move(p.source));
    }
    if (!main.frames.empty()) c.stacks.push_back(std::move(main));
    for (const auto& [tracer, text] : e.last_records) c.last[tracer] = {INT64_MIN, text};
    v->ledgers.push_back(LedgerOf(c, e));
    v->claims.push_back(std::move(c));
    v->entry_of.push_back(&e);
  }
  Classify(v->claims, v->unranked.size(), &v->report);
  // The ranks whose dump atraced aged (its own entries only: hang_entry.h) are not missing.
  std::vector<AgedRank> aged;
  for (const auto& [key, e] : entries.aged) {
    if (!e.rank) continue;
    aged.push_back({.rank = *e.rank, .host = e.host, .reason = e.reason, .at_us = static_cast<int64_t>(e.realtime_us),
                    .exported = e.exported, .uid = e.uid, .dir = e.path});
  }
  MarkAged(aged, &v->report);
  v->collectives = AnalyzeCollectives(v->ledgers, v->report.world_size);
}

size_t IndexOf(const JobView& v, const RankClaim* c) { return static_cast<size_t>(c - v.claims.data()); }

// Calls each(rank, claim, entry) in rank order while `out` is within kMaxReportText; true when
// it stopped there.
template <typename Each>
bool EachRankWithin(const JobView& v, const std::string& out, Each each) {
  for (const auto& [rank, c] : v.report.ranks) {
    if (out.size() >= kMaxReportText) return true;
    each(rank, *c, *v.entry_of[IndexOf(v, c)]);
  }
  return false;
}

std::string Stall(const HangEntry& e) {
  std::string s = e.state.empty() ? "stalled" : e.state;
  if (e.stall_s) s += " " + std::to_string(*e.stall_s) + " s";
  return s;
}

// Per host, the ranks that stopped recording first by that host's clock.
std::map<std::string, std::vector<int64_t>> FirstStoppedPerHost(const JobView& v) {
  std::map<std::string, std::pair<int64_t, std::vector<int64_t>>> best;  // host -> (stopped at, ranks)
  for (size_t i = 0; i < v.claims.size(); ++i) {
    const HangEntry& e = *v.entry_of[i];
    if (!e.stall_s) continue;
    const int64_t stopped = static_cast<int64_t>(e.realtime_us) - *e.stall_s * 1000000;
    auto [it, added] = best.try_emplace(v.claims[i].host, stopped, std::vector<int64_t>{});
    if (stopped < it->second.first) it->second = {stopped, {}};
    if (stopped == it->second.first) it->second.second.push_back(v.claims[i].rank);
  }
  std::map<std::string, std::vector<int64_t>> out;
  for (auto& [host, b] : best) {
    std::sort(b.second.begin(), b.second.end());
    out[host] = b.second;
  }
  return out;
}

// Ranks with a start entry and no hang entry: they connected, and nothing says they stalled.
std::vector<const HangEntry*> StartedOnly(const JobEntries& entries, const JobView& v) {
  std::vector<const HangEntry*> out;
  for (const auto& [key, e] : entries.starts) {
    if (e.rank && !entries.hangs.count(key) && !v.report.ranks.count(*e.rank)) out.push_back(&e);
  }
  return out;
}

std::string Ignored(const JournalBook& book) {
  std::string o;
  if (book.forged) {
    o += std::to_string(book.forged) +
         " entries claiming ATRACE_EVENT=hang, start or aged were not written by atraced (_UID=0 and atraced.service or "
         "_COMM=atraced): ignored, not shown.\n";
  }
  if (book.malformed) {
    o += std::to_string(book.malformed) + " entries of atraced's were malformed and ignored (the first: " +
         TerminalLine(book.first_problem) + ").\n";
  }
  if (book.past_bound) {
    o += std::to_string(book.past_bound) + " processes past the bound of " + std::to_string(kMaxEntries) +
         " kept were counted, not read.\n";
  }
  return o;
}

}  // namespace

std::vector<std::string> JobHosts(const JobEntries& entries, size_t* unsafe) {
  std::vector<std::string> hosts;
  *unsafe = 0;
  for (const auto* by : {&entries.hangs, &entries.starts}) {
    for (const auto& [key, e] : *by) {
      if (e.host.empty()) continue;
      if (!SafeHostName(e.host)) {
        ++*unsafe;
        continue;
      }
      hosts.push_back(e.host);
    }
  }
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return hosts;
}

std::string NextCommand(const HangEntry& e) { return atracectl::NextCommand(e.host, e.pid, !e.path.empty()); }

std::string JobReportText(const std::string& job, const JobEntries& entries, const JournalBook& book) {
  JobView v;
  Build(entries, &v);
  const FleetReport& r = v.report;
  size_t unsafe = 0;
  const std::vector<std::string> hosts = JobHosts(entries, &unsafe);
  std::string o = "Job " + TerminalLine(job) + ": hang entries of " + std::to_string(entries.hangs.size()) +
                  " process(es) on " + std::to_string(hosts.size() + unsafe) + " host(s), from the journal\n";
  const std::string collectives = CollectivesText(v.collectives, StackClassIndex(r));
  if (!collectives.empty()) o += collectives + "\n";
  o += SeenText(r, "with no hang entry in the journal (a host whose journal does not reach this collector, a rank "
                   "that ended, or one that atraced has not judged stalled yet).");
  const std::vector<const HangEntry*> started = StartedOnly(entries, v);
  if (!started.empty()) {
    o += "Started, with no hang entry:";
    for (size_t i = 0; i < started.size() && o.size() < kMaxReportText; ++i) {
      o += std::string(i ? "," : "") + " rank " + std::to_string(*started[i]->rank) + " (" +
           TerminalLine(started[i]->host) + ", pid " + std::to_string(started[i]->pid) + ")";
    }
    o += "\n";
  }
  if (!r.no_stacks.empty()) {
    o += "Ranks without frames: " + RankRanges(r.no_stacks) + " (atraced could not dump them; its entry says why)\n";
  }
  o += "\n" + ClassesText(r);
  for (const CulpritPlace& c : PlaceCulprits(r)) {
    const HangEntry& e = *v.entry_of[IndexOf(v, c.claim)];
    o += CulpritLine(c, Stall(e)) + "  next: " + TerminalLine(NextCommand(e)) + "\n";
    if (!e.path.empty()) o += "  its dump: " + TerminalLine(e.path) + "\n";
    if (!e.refused.empty()) o += "  not dumped: " + TerminalLine(e.refused) + "\n";
  }
  o += "\nMain threads' call paths ([ranks] frame, outermost first):\n" + r.tree.Text();
  AppendFirstStoppedText(FirstStoppedPerHost(v), SIZE_MAX, kMaxReportText, &o);
  o += "\nLast record of each tracer, per rank:\n";
  const bool cut = EachRankWithin(v, o, [&o](int64_t rank, const RankClaim& c, const HangEntry& e) {
    o += "  rank " + std::to_string(rank) + " (" + TerminalLine(c.host) + ", pid " + std::to_string(c.pid) + ", " +
         TerminalLine(Stall(e)) + ")\n";
    for (const auto& [tracer, rec] : c.last) o += "    " + TerminalLine(tracer) + "  " + TerminalLine(rec.text) + "\n";
  });
  if (cut) o += "  ... cut at " + std::to_string(kMaxReportText >> 20) + " MiB of text (--json holds the same bound)\n";
  if (!v.unranked.empty()) o += std::to_string(v.unranked.size()) + " process(es) without a rank label are left out.\n";
  if (unsafe) o += std::to_string(unsafe) + " host name(s) that are no plain host name were left out of the hosts.\n";
  o += Ignored(book);
  return o;
}

std::string JobReportJson(const std::string& job, const JobEntries& entries, const JournalBook& book) {
  JobView v;
  Build(entries, &v);
  const FleetReport& r = v.report;
  size_t unsafe = 0;
  const std::vector<std::string> hosts = JobHosts(entries, &unsafe);
  std::string o = "{\"job\":" + JsonString(job) + "," + SharedJson(r) +
                  ",\"communicators\":" + CommunicatorsJson(v.collectives, StackClassIndex(r)) + "," +
                  CollectivesJsonMembers(v.collectives) + ",\"culprits\":[";
  bool first = true;
  for (const CulpritPlace& c : PlaceCulprits(r)) {
    const HangEntry& e = *v.entry_of[IndexOf(v, c.claim)];
    o += std::string(first ? "" : ",") + "{" + CulpritJsonMembers(c) + ",\"state\":" + JsonString(e.state) +
         ",\"stall_s\":" + (e.stall_s ? std::to_string(*e.stall_s) : std::string("null")) + ",\"dump\":" + JsonString(e.path) +
         ",\"next\":" + JsonString(NextCommand(e)) + "}";
    first = false;
  }
  o += "],\"hosts\":[";
  for (size_t i = 0; i < hosts.size(); ++i) o += (i ? "," : "") + JsonString(hosts[i]);
  o += "],\"first_stopped_per_host\":" + FirstStoppedJson(FirstStoppedPerHost(v)) + ",\"started_without_hang\":[";
  first = true;
  for (const HangEntry* e : StartedOnly(entries, v)) {
    o += std::string(first ? "" : ",") + "{\"rank\":" + std::to_string(*e->rank) + ",\"host\":" + JsonString(e->host) +
         ",\"pid\":" + std::to_string(e->pid) + "}";
    first = false;
  }
  o += "],\"last_records\":{";
  first = true;
  const bool cut = EachRankWithin(v, o, [&o, &first](int64_t rank, const RankClaim& c, const HangEntry& e) {
    o += std::string(first ? "" : ",") + "\"" + std::to_string(rank) + "\":{\"host\":" + JsonString(c.host) +
         ",\"pid\":" + std::to_string(c.pid) + ",\"state\":" + JsonString(e.state) +
         ",\"stall_s\":" + (e.stall_s ? std::to_string(*e.stall_s) : std::string("null")) + ",\"tracers\":{";
    bool tfirst = true;
    for (const auto& [tracer, rec] : c.last) {
      o += std::string(tfirst ? "" : ",") + JsonString(tracer) + ":{\"text\":" + JsonString(rec.text) + "}";
      tfirst = false;
    }
    o += "}}";
    first = false;
  });
  o += "},\"last_records_cut\":" + std::string(cut ? "true" : "false") + ",\"tree\":" + r.tree.Json() +
       ",\"unranked_processes\":" + std::to_string(v.unranked.size()) + ",\"unsafe_host_names\":" +
       std::to_string(unsafe) + ",\"forged_entries\":" + std::to_string(book.forged) +
       ",\"malformed_entries\":" + std::to_string(book.malformed) + ",\"processes_past_bound\":" +
       std::to_string(book.past_bound) + "}\n";
  return o;
}

}  // namespace atracectl::journal
