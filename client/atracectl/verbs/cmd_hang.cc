// atracectl hang BUNDLE... [--json]: where the ranks of a hung job are, from the bundles of
// its hosts (`dump --job J`, then `export --format tar --job J`, on every host):
//   - collectives first: per HCCL communicator, the ranks grouped by the last call they
//     entered in it (from each process's collective ledger, hccl_tracer_ledger.bin, of its
//     latest save; without one, from HCCL's own records in its saved rings, hccl_records.h),
//     the ranks behind in the smallest communicator that is behind, missing
//     ranks, mismatched calls (fleet/collectives.h);
//   - missing ranks: expected by the world size the processes were labelled with, in no
//     bundle (the first place to look: a host whose bundle was not gathered, a rank that
//     died before it traced); the report cannot tell a rank that is gone from one whose
//     dump or bundle is missing;
//   - conflicts: a rank two processes claim, each named (fleet_report.h);
//   - classes: the ranks grouped by their main thread's stack (from the latest report with
//     stacks of each process that the daemon wrote: a dump, a stack dump or a crash),
//     smallest class first; the ranks of the smallest classes are named as the likely
//     culprits. A stack report in a directory a client made (bundle.jsonl's "made_by") is
//     the process's own word: listed as unverified, never used;
//   - the call-path tree of every thread of every rank (stack_tree.h), each frame with the
//     ranks that pass through it, as ranges;
//   - a culprit line for each likely culprit (fleet/culprit.h): job, rank, host, pid, the
//     frame where its main thread parts from the others' and the command to run next;
//   - per rank, the last record of each tracer (time and text), and per host the ranks
//     that stopped recording first (each host's own clock: hosts are not compared).
// Bundles with no rank labelled, or no rank with stacks, are an error with a hint (exit 1):
// an empty report would read as "nothing is wrong".
// Steps: options, gather (bundles -> one RankClaim per process), classify (fleet_report.h),
// print. Bundles are streamed (bundle_reader.h): what is held is the stacks of each process's
// latest report and one record per tracer per process, within --max-text-mib in all, and the
// tree within --max-tree-nodes.
#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "atraced/proto/cann_bin_text.h"
#include "atraced/proto/ledger_reader.h"
#include "files/bundle_reader.h"
#include "common/command_line.h"
#include "verbs/verbs.h"
#include "common/escape.h"
#include "fleet/collectives_input.h"
#include "fleet/collectives_text.h"
#include "fleet/culprit.h"
#include "fleet/fleet_groups.h"
#include "fleet/fleet_report.h"
#include "fleet/hccl_records.h"
#include "fleet/hang_text.h"
#include "common/format.h"
#include "common/text_budget.h"
#include "timeline/trace_events.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

constexpr size_t kRecordKept = 240;         // of a last record's text
constexpr size_t kHangDefaultTextMib = 64;  // stacks and last records held, in all

struct HangOptions {
  std::vector<std::string> paths;
  bool json = false;
  TextBudget budget;
  size_t max_tree_nodes = kDefaultMaxTreeNodes;
};

// What was read of each process (a group of fleet_groups.h).
struct ProcessRead {
  int64_t stacks_at = INT64_MIN;  // the directory time of the report the stacks come from
  size_t stacks_bytes = 0;        // taken from the budget for them
  std::vector<ThreadFrames> stacks;
  std::map<std::string, LastRecord> last;  // by tracer object
  std::optional<uint32_t> stacks_uid;      // of the stacks' directory
  size_t unverified = 0;                   // stack reports the process wrote itself
  int64_t unverified_at = INT64_MIN;       // the directory time of the latest one
  size_t unverified_bytes = 0;             // taken from the budget for its main thread
  std::vector<std::string> unverified_main;
  int64_t ledger_at = INT64_MIN;           // the directory time of the save the ledger comes from
  std::optional<uint32_t> ledger_uid;      // of the ledger's directory
  RankLedger::Ledger ledger = RankLedger::Ledger::kNone;
  std::string ledger_problem;
  std::vector<CommLedger> comms;
  HcclRecords hccl;                     // HCCL's own records in its rings: used without a ledger
  std::optional<uint32_t> hccl_uid;     // of the latest directory they were read from
  int64_t hccl_at = INT64_MIN;
};

struct Gathered {
  std::vector<RankClaim> claims;
  std::vector<RankLedger> ledgers;  // every process with a rank, its ledger if it has one
  size_t unranked = 0;
  bool failed = false;          // a bundle could not be read whole
  bool stacks_cut = false;      // a report's stacks were cut at the budget
};

std::string UtcTime(int64_t us) {
  const time_t s = static_cast<time_t>(us / 1000000);
  struct tm tm {};
  ::gmtime_r(&s, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06lld UTC", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1000000));
  return buf;
}

std::optional<HangOptions> ParseOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "machine-readable output (see docs/FLEET.md)")(
      "max-tree-nodes", po::value<size_t>()->default_value(kDefaultMaxTreeNodes),
      "the call-path tree's bound: paths past it are counted, with an example, not drawn")(
      "bundle", po::value<std::vector<std::string>>(), "a bundle that atracectl export wrote (tar format)");
  AddTextBudgetOption(options, kHangDefaultTextMib);
  options.add(HangJournalOptions());  // listed in the help; the journal form is chosen in RunHang
  po::positional_options_description positional;
  positional.add("bundle", -1);
  auto vm = ParseCommand(args,
                         "Usage: atracectl hang BUNDLE... [--json] [--max-text-mib N] [--max-tree-nodes N]\n"
                         "       atracectl hang --journal DIR [--job J] [--json] [--follow [--quiet S]] [--exec CMD]\n"
                         "Which ranks of a hung job are stuck where: missing ranks, ranks two processes claim, ranks "
                         "grouped by their main thread's stack (smallest group first), the call-path tree of every "
                         "thread, each rank's last records.",
                         options, positional, exit_code);
  if (!vm) return std::nullopt;
  for (const char* journal_only : {"job", "exec"}) {
    if (vm->count(journal_only)) {
      *exit_code = UsageError(std::string("hang: --") + journal_only + " goes with --journal DIR");
      return std::nullopt;
    }
  }
  if ((*vm)["follow"].as<bool>()) {
    *exit_code = UsageError("hang: --follow goes with --journal DIR");
    return std::nullopt;
  }
  if (!vm->count("bundle")) {
    *exit_code = UsageError("hang: give one or more bundles (atracectl export --format tar)");
    return std::nullopt;
  }
  HangOptions o;
  o.paths = (*vm)["bundle"].as<std::vector<std::string>>();
  o.json = (*vm)["json"].as<bool>();
  o.max_tree_nodes = (*vm)["max-tree-nodes"].as<size_t>();
  if (o.max_tree_nodes == 0) {
    *exit_code = UsageError("--max-tree-nodes: give 1 or more");
    return std::nullopt;
  }
  if (!ReadTextBudget(*vm, &o.budget, exit_code)) return std::nullopt;
  return o;
}

// A stack report in a directory a client made: the process's own word (it may write any
// frames there), counted and its main thread kept to be shown as unverified, never its stacks.
void ReadUnverified(const BundleDir& dir, const std::string& bytes, ProcessRead& ps, TextBudget& budget,
                    bool* stacks_cut) {
  bool cut = false;
  std::vector<ThreadFrames> threads = FrameNamesOf(bytes, budget.left(), &cut);
  if (cut) *stacks_cut = budget.reached = true;
  if (threads.empty()) return;  // no [stack] section: no stacks said
  ++ps.unverified;
  if (dir.created_unix_us < ps.unverified_at) return;
  ThreadFrames* main = &threads.front();
  for (ThreadFrames& t : threads) {
    if (t.tid == dir.pid) main = &t;
  }
  size_t held = 0;
  for (const std::string& f : main->frames) held += sizeof f + f.size();
  budget.Give(ps.unverified_bytes);
  budget.Take(std::min(held, budget.left()));
  ps.unverified_bytes = held;
  ps.unverified_at = dir.created_unix_us;
  ps.unverified_main = std::move(main->frames);
}

// One trace file of a process: its stacks (a report) or its last record per tracer.
void ReadFile(const BundleDir& dir, const std::string& name, std::string&& bytes, std::optional<int32_t> offset,
              const std::string& bundle, ProcessRead& ps, TextBudget& budget, bool* stacks_cut) {
  const bool is_bin = name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
  if (name == atraced::proto::kLedgerFileName) {
    if (dir.created_unix_us < ps.ledger_at) return;  // a later save's ledger is kept
    const atraced::proto::LedgerSnapshot snap = atraced::proto::ReadLedger(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    ps.ledger_at = dir.created_unix_us;
    ps.ledger_uid = dir.uid;
    ps.ledger = snap.header_valid ? RankLedger::Ledger::kRead : RankLedger::Ledger::kUnreadable;
    ps.ledger_problem = snap.problems.empty() ? "" : snap.problems.front();
    ps.comms = snap.header_valid ? CommLedgersOf(snap) : std::vector<CommLedger>{};
    return;
  }
  if (name.rfind("stackcore_tracer_", 0) == 0) {
    if (is_bin) return;  // the daemon writes the .txt beside it; a client writes no .bin of this form
    if (dir.client) return ReadUnverified(dir, bytes, ps, budget, stacks_cut);
    if (dir.created_unix_us < ps.stacks_at) return;
    budget.Give(ps.stacks_bytes);  // replaced if this report has stacks: its room is this one's
    bool cut = false;
    std::vector<ThreadFrames> stacks = FrameNamesOf(bytes, budget.left(), &cut);
    const size_t held = HeldBytes(stacks);
    if (cut) *stacks_cut = budget.reached = true;
    if (stacks.empty()) {
      budget.Take(ps.stacks_bytes);
      return;
    }
    budget.Take(std::min(held, budget.left()));
    ps.stacks = std::move(stacks);
    ps.stacks_bytes = held;
    ps.stacks_at = dir.created_unix_us;
    ps.stacks_uid = dir.uid;
    return;
  }
  std::string text;
  if (is_bin) {
    auto decoded = atraced::proto::CannBinToText(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), offset.value_or(0));
    if (!decoded.ok) {
      std::cerr << "atracectl: hang: " << TerminalLine(bundle) << ": skipped " << TerminalLine(dir.path + "/" + name)
                << ": " << TerminalLine(decoded.error) << "\n";
      return;
    }
    text = std::move(decoded.text);
  } else {
    text = std::move(bytes);
  }
  const std::string object = ObjectOfFile(name);
  if (IsHcclObject(object)) {
    ps.hccl.BeginRing();
    ForEachRecordLine(
        text,
        [&ps](int64_t, std::string_view record) {
          ps.hccl.Piece(record);
          return true;
        },
        offset);
    ps.hccl.EndRing();
    if (dir.created_unix_us >= ps.hccl_at) ps.hccl_at = dir.created_unix_us, ps.hccl_uid = dir.uid;
  }
  auto found = ps.last.find(object);
  if (found == ps.last.end()) {
    if (!budget.Take(object.size() + kRecordKept + sizeof(LastRecord))) return;
    found = ps.last.emplace(object, LastRecord{}).first;
  }
  LastRecord& last = found->second;
  ForEachRecordLine(
      text,
      [&last](int64_t ts, std::string_view record) {
        if (ts >= last.ts) last = {ts, std::string(record.substr(0, kRecordKept))};
        return true;
      },
      offset);
}

// Every bundle, streamed: one RankClaim per process with a rank.
Gathered Gather(HangOptions& o, FleetGroups& groups) {
  Gathered out;
  std::map<int64_t, ProcessRead> state;  // by group id
  for (size_t b = 0; b < o.paths.size(); ++b) {
    const FleetBundle& fb = groups.bundles()[b];
    const std::optional<int32_t> offset = fb.has_host ? std::optional<int32_t>(fb.host.utc_offset_s) : std::nullopt;
    BundleVisitor v;
    v.file = [&](const BundleDir& dir, const std::string& name, std::string&& bytes) {
      ReadFile(dir, name, std::move(bytes), offset, o.paths[b], state[groups.Of(b, dir).id], o.budget, &out.stacks_cut);
    };
    BundleRead r = ReadBundle(o.paths[b], v);
    for (const auto& p : r.problems) std::cerr << "atracectl: hang: " << TerminalLine(o.paths[b]) << ": " << p << "\n";
    if (!r.status.ok()) {
      std::cerr << "atracectl: hang: " << TerminalLine(o.paths[b]) << ": " << TerminalLine(r.status.message()) << "\n";
      out.failed = true;
    }
  }
  for (const FleetGroup& g : groups.groups()) {
    if (!g.rank) {
      ++out.unranked;
      continue;
    }
    ProcessRead& ps = state[g.id];
    RankLedger& l = out.ledgers.emplace_back();
    l.rank = *g.rank;
    l.host = g.host;
    l.pid = g.pid;
    l.uid = ps.ledger_uid ? ps.ledger_uid : g.uid;
    l.evidence_uid = ps.stacks_uid ? ps.stacks_uid : g.uid;
    l.ledger = ps.ledger;
    l.problem = std::move(ps.ledger_problem);
    l.comms = std::move(ps.comms);
    if (l.ledger == RankLedger::Ledger::kNone) {
      // No ledger: HCCL's own records, where its rings hold any.
      l.hccl_records_skipped = ps.hccl.skipped();
      if (ps.hccl.any()) {
        l.ledger = RankLedger::Ledger::kRead;
        l.from_hccl_records = true;
        l.comms = ps.hccl.Comms();
        l.uid = ps.hccl_uid ? ps.hccl_uid : g.uid;
      }
    }
    RankClaim& claim = out.claims.emplace_back();
    claim.rank = *g.rank;
    claim.world_size = g.world_size;
    claim.uid = g.uid;
    claim.host = g.host;
    claim.pid = g.pid;
    claim.stacks = std::move(ps.stacks);
    claim.last = std::move(ps.last);
    claim.job = g.job;
    claim.unverified = ps.unverified;
    claim.unverified_main = std::move(ps.unverified_main);
  }
  return out;
}

std::string Json(const FleetReport& r, const CollectivesReport& collectives) {
  std::string o = "{" + SharedJson(r) + ",\"culprits\":[";
  bool first = true;
  for (const CulpritPlace& c : PlaceCulprits(r)) {
    o += std::string(first ? "" : ",") + "{" + CulpritJsonMembers(c) +
         ",\"next\":" + JsonString(NextCommand(c.claim->host, c.claim->pid, true)) + "}";
    first = false;
  }
  o += "],\"first_stopped_per_host\":" + FirstStoppedJson(r.first_stopped) + ",\"last_records\":{";
  first = true;
  for (const auto& [rank, c] : r.ranks) {
    o += std::string(first ? "" : ",") + "\"" + std::to_string(rank) + "\":{\"host\":" + JsonString(c->host) +
         ",\"pid\":" + std::to_string(c->pid) + ",\"tracers\":{";
    bool tfirst = true;
    for (const auto& [tracer, rec] : c->last) {
      o += std::string(tfirst ? "" : ",") + JsonString(tracer) + ":{\"ts_us\":" + std::to_string(rec.ts) +
           ",\"text\":" + JsonString(rec.text) + "}";
      tfirst = false;
    }
    o += "}}";
    first = false;
  }
  o += "},\"tree\":" + r.tree.Json() + ",\"tree_cut_paths\":" + std::to_string(r.tree.cut_paths()) +
       ",\"unranked_processes\":" + std::to_string(r.unranked) +
       ",\"communicators\":" + CommunicatorsJson(collectives, StackClassIndex(r)) + "," + CollectivesJsonMembers(collectives) +
       "}\n";
  return o;
}

std::string Text(const FleetReport& r, const CollectivesReport& collectives) {
  std::string o = CollectivesText(collectives, StackClassIndex(r));
  if (!o.empty()) o += "\n";
  o += SeenText(r, "in no bundle. Look there first (a host whose bundle was not gathered, a rank that "
                   "ended or never traced). This report cannot decide where dumps are missing: a rank "
                   "absent here may be stuck as well.");
  if (!r.no_stacks.empty()) {
    o += "Ranks without stacks: " + RankRanges(r.no_stacks, kRanksShown) +
         " (no dump, stack dump or crash report in their bundle: run 'atracectl dump --job J' before export)\n";
  }
  o += "\n" + ClassesText(r);
  for (const CulpritPlace& c : PlaceCulprits(r)) {
    o += CulpritLine(c, "") + "  next: " + TerminalLine(NextCommand(c.claim->host, c.claim->pid, true)) + "\n";
  }
  o += "\nCall-path tree of every thread of every rank ([ranks] frame, outermost first):\n" + r.tree.Text();
  o += "\nLast record of each tracer, per rank:\n";
  for (const auto& [rank, c] : r.ranks) {
    o += "  rank " + std::to_string(rank) + " (" + TerminalLine(c->host) + ", pid " + std::to_string(c->pid) + ")\n";
    for (const auto& [tracer, rec] : c->last) {
      o += "    " + TerminalLine(tracer) + "  " + UtcTime(rec.ts) + "  " + TerminalLine(rec.text) + "\n";
    }
  }
  if (!r.first_stopped.empty()) AppendFirstStoppedText(r.first_stopped, kRanksShown, SIZE_MAX, &o);
  if (r.unranked) o += std::to_string(r.unranked) + " process(es) without a rank label are left out.\n";
  return o;
}

// Why the bundles make no report, with what to do; "" when they make one.
std::string NothingToReport(const FleetReport& r, const Gathered& g) {
  if (r.ranks.empty()) {
    return "no process in these bundles has a rank label (" + std::to_string(g.unranked) +
           " without one): label the job's processes (RANK_ID or RANK, and ATRACE_JOB; docs/FLEET.md) and export "
           "with --job J";
  }
  const bool any_ledger = std::any_of(g.ledgers.begin(), g.ledgers.end(),
                                     [](const RankLedger& l) { return l.ledger == RankLedger::Ledger::kRead; });
  if (r.classes.empty() && !any_ledger) {
    return "none of the " + std::to_string(r.ranks.size()) +
           " ranks has stacks in these bundles: run 'atracectl dump --job J' on each host before 'atracectl export'";
  }
  return "";
}

}  // namespace

int RunHang(const Globals& globals, const Args& args) {
  // The journal's form reads no bundle (verbs/cmd_hang_journal.cc).
  for (const std::string& a : args) {
    if (a == "--journal" || a.rfind("--journal=", 0) == 0) return RunHangJournal(globals, args);
  }
  int exit_code = kExitOk;
  std::optional<HangOptions> o = ParseOptions(args, &exit_code);
  if (!o) return exit_code;
  FleetGroups groups(o->paths);
  const Gathered gathered = Gather(*o, groups);
  FleetReport report(o->max_tree_nodes);
  Classify(gathered.claims, gathered.unranked, &report);
  if (const std::string why = NothingToReport(report, gathered); !why.empty()) {
    std::cerr << "atracectl: hang: " << why << "\n";
    return kExitFailed;
  }
  const CollectivesReport collectives = AnalyzeCollectives(gathered.ledgers, report.world_size);
  std::cout << (o->json ? Json(report, collectives) : Text(report, collectives));
  if (gathered.stacks_cut || o->budget.reached) {
    std::cerr << "atracectl: hang: stacks or last records past the text bound (--max-text-mib "
              << (o->budget.total >> 20) << ") were left out; raise it to see them\n";
  }
  if (report.tree.cut_paths()) {
    std::cerr << "atracectl: hang: " << report.tree.cut_paths()
              << " call path(s) past the tree's bound (--max-tree-nodes " << o->max_tree_nodes
              << ") are counted, not drawn\n";
  }
  return gathered.failed ? kExitFailed : kExitOk;
}

}  // namespace atracectl
