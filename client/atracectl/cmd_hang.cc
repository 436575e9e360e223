// atracectl hang BUNDLE... [--json]: where the ranks of a hung job are, from the bundles of
// its hosts (`dump --job J`, then `export --format tar --job J`, on every host):
//   - collectives first: per HCCL communicator, the ranks grouped by the last call they
//     entered in it (from each process's collective ledger, hccl_tracer_ledger.bin, of its
//     latest save), the ranks behind in the smallest communicator that is behind, missing
//     ranks, mismatched calls (fleet/collectives.h);
//   - missing ranks: expected by the world size the processes were labelled with, in no
//     bundle (the first place to look: a host whose bundle was not gathered, a rank that
//     died before it traced); the report cannot tell a rank that is gone from one whose
//     dump or bundle is missing;
//   - classes: the ranks grouped by their main thread's stack (from the latest report with
//     stacks of each process: a dump, a stack dump or a crash), smallest class first; the
//     ranks of the smallest classes are named as the likely culprits;
//   - the call-path tree of every thread of every rank (stack_tree.h), each frame with the
//     ranks that pass through it, as ranges;
//   - per rank, the last record of each tracer (time and text), and the ranks whose last
//     record is the oldest.
// Bundles are streamed (bundle_reader.h): what is held is the stacks of each process's
// latest report and one record per tracer per process.
#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "atraced/proto/cann_bin_text.h"
#include "atraced/proto/ledger_reader.h"
#include "bundle_reader.h"
#include "cli.h"
#include "escape.h"
#include "fleet/collectives_input.h"
#include "fleet/collectives_text.h"
#include "fleet_groups.h"
#include "format.h"
#include "parse.h"
#include "stack_tree.h"
#include "trace_events.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

constexpr size_t kRecordKept = 240;  // of a last record's text

struct LastRecord {
  int64_t ts = INT64_MIN;
  std::string text;
};

struct ProcessState {
  int64_t stacks_at = INT64_MIN;  // the directory time of the report the stacks come from
  std::vector<ThreadStack> stacks;
  std::string stacks_dir;
  std::map<std::string, LastRecord> last;  // by tracer object
  int64_t ledger_at = INT64_MIN;  // the directory time of the save the ledger comes from
  RankLedger::Ledger ledger = RankLedger::Ledger::kNone;
  std::string ledger_problem;
  std::vector<CommLedger> comms;
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

std::string JsonInts(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

struct Class {
  std::vector<std::string> stack;  // the main thread's frames, innermost first
  std::vector<int64_t> ranks;
};

}  // namespace

int RunHang(const Globals&, const Args& args) {
  int exit_code = kExitOk;
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "machine-readable output (see docs/FLEET.md)")(
      "bundle", po::value<std::vector<std::string>>(), "a bundle that atracectl export wrote (tar format)");
  po::positional_options_description positional;
  positional.add("bundle", -1);
  auto vm = ParseCommand(args,
                         "Usage: atracectl hang BUNDLE... [--json]\n"
                         "Which ranks of a hung job are stuck where: missing ranks, ranks grouped by their main "
                         "thread's stack (smallest group first), the call-path tree of every thread, each rank's "
                         "last records.",
                         options, positional, &exit_code);
  if (!vm) return exit_code;
  if (!vm->count("bundle")) return UsageError("hang: give one or more bundles (atracectl export --format tar)");
  const auto paths = (*vm)["bundle"].as<std::vector<std::string>>();
  const bool json = (*vm)["json"].as<bool>();

  FleetGroups groups(paths);
  std::map<int64_t, ProcessState> state;  // by group id
  bool failed = false;
  for (size_t b = 0; b < paths.size(); ++b) {
    const FleetBundle& fb = groups.bundles()[b];
    const std::optional<int32_t> offset = fb.has_host ? std::optional<int32_t>(fb.host.utc_offset_s) : std::nullopt;
    BundleVisitor v;
    v.file = [&](const BundleDir& dir, const std::string& name, std::string&& bytes) {
      const FleetGroup& g = groups.Of(b, dir);
      ProcessState& ps = state[g.id];
      const bool is_bin = name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
      if (name == atraced::proto::kLedgerFileName) {
        if (dir.created_unix_us < ps.ledger_at) return;  // a later save's ledger is kept
        const atraced::proto::LedgerSnapshot snap = atraced::proto::ReadLedger(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
        ps.ledger_at = dir.created_unix_us;
        ps.ledger = snap.header_valid ? RankLedger::Ledger::kRead : RankLedger::Ledger::kUnreadable;
        ps.ledger_problem = snap.problems.empty() ? "" : snap.problems.front();
        ps.comms = snap.header_valid ? CommLedgersOf(snap) : std::vector<CommLedger>{};
        return;
      }
      if (name.rfind("stackcore_tracer_", 0) == 0) {
        if (is_bin || dir.created_unix_us < ps.stacks_at) return;
        std::vector<ThreadStack> stacks = ParseStackSection(bytes);
        if (stacks.empty()) return;
        ps.stacks = std::move(stacks);
        ps.stacks_at = dir.created_unix_us;
        ps.stacks_dir = dir.path;
        return;
      }
      std::string text;
      if (is_bin) {
        auto decoded = atraced::proto::CannBinToText(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), offset.value_or(0));
        if (!decoded.ok) {
          std::cerr << "atracectl: hang: " << TerminalLine(paths[b]) << ": skipped " << TerminalLine(dir.path + "/" + name)
                    << ": " << TerminalLine(decoded.error) << "\n";
          return;
        }
        text = std::move(decoded.text);
      } else {
        text = std::move(bytes);
      }
      LastRecord& last = ps.last[ObjectOfFile(name)];
      ForEachRecordLine(
          text,
          [&last](int64_t ts, std::string_view record) {
            if (ts >= last.ts) last = {ts, std::string(record.substr(0, kRecordKept))};
            return true;
          },
          offset);
    };
    BundleRead r = ReadBundle(paths[b], v);
    for (const auto& p : r.problems) std::cerr << "atracectl: hang: " << TerminalLine(paths[b]) << ": " << p << "\n";
    if (!r.ok) {
      std::cerr << "atracectl: hang: " << TerminalLine(paths[b]) << ": " << TerminalLine(r.error) << "\n";
      failed = true;
    }
  }

  // One process per rank: the one with the latest stacks (a rank seen twice is said).
  std::map<int64_t, const FleetGroup*> by_rank;
  std::optional<int64_t> world;
  size_t unranked = 0;
  for (const FleetGroup& g : groups.groups()) {
    if (g.world_size) world = std::max(world.value_or(0), *g.world_size);
    if (!g.rank) {
      ++unranked;
      continue;
    }
    auto [it, added] = by_rank.try_emplace(*g.rank, &g);
    if (!added) {
      std::cerr << "atracectl: hang: rank " << *g.rank << " is in more than one process (pid " << it->second->pid
                << " on " << TerminalLine(it->second->host) << ", pid " << g.pid << " on " << TerminalLine(g.host)
                << "): the one with the latest stacks is used; export one job (--job) to avoid this\n";
      if (state[g.id].stacks_at > state[it->second->id].stacks_at) it->second = &g;
    }
  }
  std::vector<int64_t> seen, missing, no_stacks;
  for (const auto& [rank, g] : by_rank) seen.push_back(rank);
  if (world && *world <= (1 << 24)) {
    for (int64_t r = 0; r < *world; ++r) {
      if (!by_rank.count(r)) missing.push_back(r);
    }
  }
  // Classes by the main thread's stack (the thread whose tid is the pid, else the first).
  StackTree tree;
  std::map<std::vector<std::string>, std::vector<int64_t>> by_stack;
  for (const auto& [rank, g] : by_rank) {
    const ProcessState& ps = state[g->id];
    if (ps.stacks.empty()) {
      no_stacks.push_back(rank);
      continue;
    }
    const ThreadStack* main = &ps.stacks.front();
    for (const ThreadStack& t : ps.stacks) {
      if (t.tid == g->pid) main = &t;
      tree.Add(rank, t.frames);
    }
    by_stack[main->frames].push_back(rank);
  }
  std::vector<Class> classes;
  for (auto& [stack, ranks] : by_stack) classes.push_back({stack, ranks});
  std::stable_sort(classes.begin(), classes.end(), [](const Class& a, const Class& b) {
    return a.ranks.size() != b.ranks.size() ? a.ranks.size() < b.ranks.size() : a.ranks.front() < b.ranks.front();
  });
  // The collectives: every process that claims a rank, with its ledger (conflicts are the
  // analysis's to settle), and the stack class of each rank to join to.
  std::vector<RankLedger> ledgers;
  for (const FleetGroup& g : groups.groups()) {
    if (!g.rank) continue;
    const ProcessState& ps = state[g.id];
    RankLedger& l = ledgers.emplace_back();
    l.rank = *g.rank;
    l.host = g.host;
    l.pid = g.pid;
    l.ledger = ps.ledger;
    l.problem = ps.ledger_problem;
    l.comms = ps.comms;
  }
  const CollectivesReport collectives = AnalyzeCollectives(ledgers, world);
  StackClassOf stack_class;
  for (size_t i = 0; i < classes.size(); ++i) {
    for (int64_t r : classes[i].ranks) stack_class[r] = i;
  }
  std::vector<int64_t> outliers;
  if (classes.size() > 1) {
    for (const Class& c : classes) {
      if (c.ranks.size() == classes.front().ranks.size()) outliers.insert(outliers.end(), c.ranks.begin(), c.ranks.end());
    }
    std::sort(outliers.begin(), outliers.end());
  }
  // The ranks whose latest record (over every tracer) is the oldest.
  std::map<int64_t, int64_t> latest;  // rank -> its last record's time
  for (const auto& [rank, g] : by_rank) {
    for (const auto& [tracer, rec] : state[g->id].last) latest[rank] = std::max(latest.count(rank) ? latest[rank] : INT64_MIN, rec.ts);
  }
  std::vector<int64_t> oldest;
  if (latest.size() > 1) {
    int64_t min_ts = INT64_MAX;
    for (const auto& [rank, ts] : latest) min_ts = std::min(min_ts, ts);
    for (const auto& [rank, ts] : latest) {
      if (ts == min_ts) oldest.push_back(rank);
    }
  }

  if (json) {
    std::string o = "{\"ranks_expected\":";
    if (world) {
      o += "[";
      for (int64_t r = 0; r < *world && r < (1 << 24); ++r) o += (r ? "," : "") + std::to_string(r);
      o += "]";
    } else {
      o += "null";
    }
    o += ",\"world_size\":" + (world ? std::to_string(*world) : std::string("null"));
    o += ",\"ranks_seen\":" + JsonInts(seen) + ",\"missing\":" + JsonInts(missing) + ",\"classes\":[";
    for (size_t i = 0; i < classes.size(); ++i) {
      o += std::string(i ? "," : "") + "{\"ranks\":" + JsonInts(classes[i].ranks) +
           ",\"ranges\":" + JsonString(RankRanges(classes[i].ranks)) + ",\"count\":" + std::to_string(classes[i].ranks.size()) +
           ",\"stack\":[";
      for (size_t f = 0; f < classes[i].stack.size(); ++f) o += (f ? "," : "") + JsonString(classes[i].stack[f]);
      o += "]}";
    }
    o += "],\"outliers\":" + JsonInts(outliers) + ",\"no_stacks\":" + JsonInts(no_stacks) +
         ",\"oldest_last_record\":" + JsonInts(oldest) + ",\"last_records\":{";
    bool first = true;
    for (const auto& [rank, g] : by_rank) {
      o += std::string(first ? "" : ",") + "\"" + std::to_string(rank) + "\":{\"host\":" + JsonString(g->host) +
           ",\"pid\":" + std::to_string(g->pid) + ",\"tracers\":{";
      bool tfirst = true;
      for (const auto& [tracer, rec] : state[g->id].last) {
        o += std::string(tfirst ? "" : ",") + JsonString(tracer) + ":{\"ts_us\":" + std::to_string(rec.ts) +
             ",\"text\":" + JsonString(rec.text) + "}";
        tfirst = false;
      }
      o += "}}";
      first = false;
    }
    o += "},\"tree\":" + tree.Json() + ",\"unranked_processes\":" + std::to_string(unranked) +
         ",\"communicators\":" + CommunicatorsJson(collectives, stack_class) + "," + CollectivesJsonMembers(collectives) +
         "}\n";
    std::cout << o;
    return failed ? kExitFailed : kExitOk;
  }

  std::string o = CollectivesText(collectives, stack_class);
  if (!o.empty()) o += "\n";
  o += "Ranks seen: " + (seen.empty() ? std::string("none") : RankRanges(seen)) +
       (world ? " of " + std::to_string(*world) + " (world size)" : std::string(" (no world size labelled)")) + "\n";
  if (!missing.empty()) {
    o += "Missing ranks: " + RankRanges(missing) +
         ": expected by the world size, in no bundle. Look there first (a host whose bundle was not gathered, a "
         "rank that ended or never traced). This report cannot decide where dumps are missing: a rank absent here "
         "may be stuck as well.\n";
  }
  if (!no_stacks.empty()) {
    o += "Ranks without stacks: " + RankRanges(no_stacks) + " (no dump, stack dump or crash report in their bundle: run "
         "'atracectl dump --job J' before export)\n";
  }
  o += "\nClasses by the main thread's stack, smallest first:\n";
  for (size_t i = 0; i < classes.size(); ++i) {
    const Class& c = classes[i];
    o += "  S" + std::to_string(i + 1) + " ranks " + RankRanges(c.ranks) + " (" + std::to_string(c.ranks.size()) + "): ";
    for (size_t f = 0; f < c.stack.size() && f < 6; ++f) o += (f ? " < " : "") + TerminalLine(c.stack[f]);
    if (c.stack.size() > 6) o += " < ...";
    o += "\n";
  }
  if (!outliers.empty()) {
    o += "Likely culprits: ranks " + RankRanges(outliers) + ": their main thread is somewhere the others' are not.\n";
  } else if (classes.size() == 1) {
    o += "Every rank with stacks has its main thread in the same place.\n";
  }
  o += "\nCall-path tree of every thread of every rank ([ranks] frame, outermost first):\n" + tree.Text();
  o += "\nLast record of each tracer, per rank:\n";
  for (const auto& [rank, g] : by_rank) {
    o += "  rank " + std::to_string(rank) + " (" + TerminalLine(g->host) + ", pid " + std::to_string(g->pid) + ")\n";
    for (const auto& [tracer, rec] : state[g->id].last) {
      o += "    " + TerminalLine(tracer) + "  " + UtcTime(rec.ts) + "  " + TerminalLine(rec.text) + "\n";
    }
  }
  if (!oldest.empty()) o += "Oldest last record: ranks " + RankRanges(oldest) + "\n";
  if (unranked) o += std::to_string(unranked) + " process(es) without a rank label are left out.\n";
  std::cout << o;
  return failed ? kExitFailed : kExitOk;
}

}  // namespace atracectl
