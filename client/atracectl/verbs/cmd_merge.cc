// atracectl merge BUNDLE... --format chrome-json|html -o FILE: one timeline of the bundles
// of every host of a job (`export --format tar`), drawn by export's own writers
// (trace_events.h, timeline_html.h):
//   - one process group per process, labelled "rank R · HOST · pid P · COMM", in rank order
//     (numerically; processes without a rank after them) (fleet_groups.h);
//   - a track per tracer object, per device ("device N: object") and the "events" track of
//     its reports (crash, death, dump) and exits;
//   - a track per communicator of its collective ledger ("comm NAME"), each call a span from
//     enqueue to completion (collective_spans.h), as the latest save of the process has it;
//   - a record kept in several directories of one process (a report, then a later dump) is
//     drawn once: by its identity in its ring (the process, the object, the ring and the
//     record's position in it, which every ring save the daemon writes ends with,
//     proto/ring_positions.h), never by time or directory order; a save without positions is
//     placed in its ring's sequence by text and order (ring_windows.h); a record repeated
//     within one file stays;
//   - a bundle whose host clock was not synchronized at export (bundle.jsonl) is flagged: a
//     "host clock" track in each of its groups says so at the export time, the chrome-json
//     document's "metadata" lists every bundle's clock state, and standard error says it.
// Bundles are streamed (bundle_reader.h). chrome-json is written as it is read: what is held
// is one trace file and, per track, the runs of positions seen of each ring (one entry per
// run: a ring's saves are mostly one run) or 16 bytes per record of its ring's window, never
// the records' text. html holds the
// timeline it draws, bounded by --max-text-mib as export's is.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "atraced/proto/cann_bin_text.h"
#include "atraced/proto/ring_positions.h"
#include "files/bundle_reader.h"
#include "common/command_line.h"
#include "verbs/verbs.h"
#include "common/escape.h"
#include "fleet/fleet_groups.h"
#include "common/format.h"
#include "common/output_file.h"
#include "atraced/proto/ledger_reader.h"
#include "timeline/collective_spans.h"
#include "timeline/ring_windows.h"
#include "common/text_budget.h"
#include "timeline/timeline_html.h"
#include "timeline/trace_events.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

constexpr size_t kReportKept = 16 * 1024;

class Merger {
 public:
  Merger(FleetGroups& groups, TextBudget* budget, std::function<void(const TimelineEvent&)> emit)
      : groups_(groups), budget_(budget), emit_(std::move(emit)) {}

  void File(size_t b, const BundleDir& dir, const std::string& name, std::string&& bytes) {
    FleetGroup& g = groups_.Of(b, dir);
    const BundleFleetClock& clock = ClockOf(b);
    if (dir.kind == "exit" && exits_.insert({b, dir.path}).second) {
      Emit(g, "events", {dir.created_unix_us, g.id, 0, Mark::kExit, 0, "exit", ""},
           "exit directory " + dir.path + " (the traces kept as the process exited)");
    }
    const bool is_bin = name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
    if (name == atraced::proto::kLedgerFileName) {
      std::string why;
      if (!collectives_.Add(g.id, static_cast<int64_t>(dir.created_unix_us),
                            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), &why)) {
        problems.push_back(groups_.bundles()[b].path + ": " + dir.path + "/" + name + ": " + why);
      }
      return;
    }
    if (name.rfind("stackcore_tracer_", 0) == 0) {
      if (is_bin) return;  // its .txt says it
      if (bytes.size() > kReportKept) bytes.resize(kReportKept);
      const auto [mark, event_name] = ReportMark(bytes);
      Emit(g, "events", {dir.created_unix_us, g.id, 0, mark, 0, event_name, ""}, std::move(bytes));
      return;
    }
    std::string track = ObjectOfFile(name);
    if (dir.side == "device") track = "device " + std::to_string(dir.device_id) + ": " + track;
    // Where each record sits in its ring, as the save says (before the bytes become text).
    const std::optional<atraced::proto::RingPositions> positions = atraced::proto::FindRingPositions(bytes);
    std::string text;
    if (is_bin) {
      auto decoded = atraced::proto::CannBinToText(
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), clock.utc_offset_s.value_or(0));
      if (!decoded.ok) {
        problems.push_back(groups_.bundles()[b].path + ": " + dir.path + "/" + name + ": " + decoded.error);
        return;
      }
      text = std::move(decoded.text);
    } else {
      text = std::move(bytes);
    }
    // The save's records, placed in their ring's sequence (ring_windows.h): only those no
    // other save of this track drew are drawn.
    std::vector<SavedRecord> records;
    ForEachRecordLine(
        text,
        [&records](int64_t ts, std::string_view record) {
          records.push_back({ts, record});
          return true;
        },
        clock.utc_offset_s);
    // A record line for each position: the records are known by their identity in their ring.
    // Else (a save from before positions, a file a process wrote itself, a record whose text
    // holds a line that reads as a record) the save is aligned by text and order.
    std::vector<bool> fresh;
    if (positions && positions->records.size() == records.size()) {
      fresh.reserve(records.size());
      for (const uint64_t k : positions->records) fresh.push_back(seen_.Add({g.id, track}, positions->ring, k));
    } else {
      fresh = windows_.Place({g.id, track}, records);
    }
    for (size_t i = 0; i < records.size() && !(budget_ && budget_->reached); ++i) {
      if (!fresh[i]) {
        ++duplicates;
        continue;
      }
      Emit(g, track, {records[i].ts, g.id, 0, Mark::kRecord, 0, "", ""}, std::string(records[i].text));
    }
  }

  // The "host clock" track of each group of an unsynchronized bundle.
  void FlagClocks() {
    for (const FleetGroup& g : groups_.groups()) {
      const FleetBundle& fb = groups_.bundles()[g.bundle];
      if (!fb.has_host || fb.host.clock_synchronized.value_or(true)) continue;
      Emit(g, "host clock", {fb.host.exported_unix_us, g.id, 0, Mark::kRecord, 0, "clock not synchronized", ""},
           "the clock of " + g.host + " was not synchronized at export (adjtimex: " + fb.host.adjtimex +
               "): this host's times may be shifted against the other hosts'");
    }
  }

  // The collective calls of each group's latest ledger, once every bundle was read.
  void DrawCollectives() {
    collectives_.ForEach([this](int64_t group, const CollectiveCall& call) {
      if (budget_ && budget_->reached) return false;
      Emit(group, call.track, {call.ts, group, 0, Mark::kCollective, 0, call.name, "", call.dur, call.args}, call.text);
      return true;
    });
  }

  // (group id, track) -> tid, 1.. per group in order of appearance.
  std::map<std::pair<int64_t, std::string>, int> tracks;
  std::vector<std::string> problems;
  size_t duplicates = 0;

 private:
  struct BundleFleetClock {
    std::optional<int32_t> utc_offset_s;
  };
  const BundleFleetClock& ClockOf(size_t b) {
    auto [it, added] = clocks_.try_emplace(b);
    if (added && groups_.bundles()[b].has_host) it->second.utc_offset_s = groups_.bundles()[b].host.utc_offset_s;
    return it->second;
  }

  void Emit(const FleetGroup& g, const std::string& track, TimelineEvent ev, std::string text) {
    Emit(g.id, track, ev, std::move(text));
  }
  void Emit(int64_t group, const std::string& track, TimelineEvent ev, std::string text) {
    auto [tit, added] = tracks.try_emplace({group, track}, 0);
    if (added) tit->second = ++tids_[group];
    ev.tid = tit->second;
    if (ev.name.empty()) ev.name = tit->first.second;
    ev.text = text;
    emit_(ev);
  }

  FleetGroups& groups_;
  TextBudget* budget_;
  std::function<void(const TimelineEvent&)> emit_;
  std::map<size_t, BundleFleetClock> clocks_;
  std::map<int64_t, int> tids_;
  RingPositionsSeen seen_;
  RingWindows windows_;
  std::set<std::pair<size_t, std::string>> exits_;
  CollectiveCalls collectives_;
};

// merge's command line, checked.
struct MergeOptions {
  std::vector<std::string> paths;
  bool chrome = true;  // else html
  std::string output;
  TextBudget budget;
};

std::optional<MergeOptions> ParseOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("format", po::value<std::string>(),
                        "chrome-json: the Trace Event Format (Perfetto, chrome://tracing), streamed; html: one "
                        "self-contained timeline page")(
      "output,o", po::value<std::string>(), "write to FILE (made new, mode 0640; never over an existing file)")(
      "bundle", po::value<std::vector<std::string>>(), "a bundle that atracectl export wrote (tar format)");
  AddTextBudgetOption(options);
  po::positional_options_description positional;
  positional.add("bundle", -1);
  auto vm = ParseCommand(args,
                         "Usage: atracectl merge BUNDLE... --format chrome-json|html -o FILE [--max-text-mib N]\n"
                         "One timeline of the bundles of every host of a job: a process group per rank.",
                         options, positional, exit_code);
  if (!vm) return std::nullopt;
  auto usage = [exit_code](const std::string& message) {
    *exit_code = UsageError(message);
    return std::nullopt;
  };
  if (!vm->count("bundle")) return usage("merge: give one or more bundles (atracectl export --format tar)");
  if (!vm->count("format")) return usage("merge: give --format chrome-json or html");
  if (!vm->count("output")) return usage("merge: give --output FILE");
  const std::string format = (*vm)["format"].as<std::string>();
  if (format != "chrome-json" && format != "html") {
    return usage("merge: --format " + TerminalLine(format) + ": the formats are chrome-json and html");
  }
  MergeOptions o;
  if (!ReadTextBudget(*vm, &o.budget, exit_code)) return std::nullopt;
  o.paths = (*vm)["bundle"].as<std::vector<std::string>>();
  o.chrome = format == "chrome-json";
  o.output = (*vm)["output"].as<std::string>();
  return o;
}

// Where the drawn events go: chrome-json writes each as it comes, html keeps them (within the
// budget) for the page. Writes go through a small buffer to the output file.
class Drawing {
 public:
  Drawing(const MergeOptions& o, NewOutputFile& out) : o_(o), out_(out) {
    if (o_.chrome) Put("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  }

  void Event(const TimelineEvent& ev) {
    if (o_.chrome) {
      if (!first_) Put(",\n");
      first_ = false;
      Put(ChromeEvent(ev));
      return;
    }
    if (!budget_.Take(sizeof(TimelineEvent) + ev.text.size() + ev.name.size() + ev.args.size())) return;
    const std::string& text = timeline_.texts.emplace_back(ev.text);
    const std::string& name = timeline_.texts.emplace_back(ev.name);
    TimelineEvent kept = ev;
    kept.text = text;
    kept.name = name;
    if (!ev.args.empty()) kept.args = timeline_.texts.emplace_back(ev.args);
    timeline_.events.push_back(kept);
  }

  // chrome-json: the process and track names, their order, and each bundle's clock state.
  void ChromeEnd(const FleetGroups& groups, const Merger& merger) {
    for (const FleetGroup& g : groups.groups()) {
      Put(",\n" + ChromeProcessName(g.id, FleetGroups::Label(g)));
      // Perfetto and chrome://tracing order process groups by this: the ranks' order.
      Put(",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(g.id) +
          ",\"tid\":0,\"args\":{\"sort_index\":" + std::to_string(g.id) + "}}");
    }
    for (const auto& [key, tid] : merger.tracks) Put(",\n" + ChromeThreadName(key.first, tid, key.second));
    Put("\n],\"metadata\":{\"atracectl_merge\":{\"bundles\":[");
    for (size_t b = 0; b < groups.bundles().size(); ++b) {
      const FleetBundle& fb = groups.bundles()[b];
      Put(std::string(b ? "," : "") + "{\"path\":" + JsonString(fb.path) + ",\"host\":" + JsonString(groups.HostOf(b)) +
          ",\"clock_synchronized\":" +
          (fb.has_host && fb.host.clock_synchronized ? (*fb.host.clock_synchronized ? "true" : "false") : "null") + "}");
    }
    Put("]}}}\n");
  }

  // html: the page of what was kept, in time order.
  void HtmlEnd(const FleetGroups& groups, const Merger& merger) {
    for (const FleetGroup& g : groups.groups()) timeline_.processes[g.id] = {FleetGroups::Label(g), g.pid, false};
    for (const auto& [key, tid] : merger.tracks) timeline_.threads[key] = tid;
    std::stable_sort(timeline_.events.begin(), timeline_.events.end(),
                     [](const TimelineEvent& a, const TimelineEvent& b) { return a.ts < b.ts; });
    WriteTimelinePage(timeline_, std::to_string(o_.paths.size()) + " bundles", [this](std::string_view p) { Put(p); });
  }

  // Writes what is buffered; false when a write failed (now or before).
  bool Flush() {
    if (!pending_.empty() && !out_.Write(pending_)) write_failed_ = true;
    pending_.clear();
    return !write_failed_;
  }

  TextBudget& budget() { return budget_; }

 private:
  void Put(std::string_view piece) {
    pending_.append(piece);
    if (pending_.size() >= 64 * 1024) Flush();
  }

  const MergeOptions& o_;
  NewOutputFile& out_;
  TextBudget budget_ = o_.budget;
  Timeline timeline_;  // html only
  std::string pending_;
  bool first_ = true, write_failed_ = false;
};

// Every bundle through the merger; false when one could not be read whole.
bool ReadBundles(const MergeOptions& o, Merger& merger, const TextBudget& budget) {
  bool ok = true;
  for (size_t b = 0; b < o.paths.size(); ++b) {
    BundleVisitor v;
    v.file = [&](const BundleDir& dir, const std::string& name, std::string&& bytes) {
      if (!o.chrome && budget.reached) return;
      merger.File(b, dir, name, std::move(bytes));
    };
    BundleRead r = ReadBundle(o.paths[b], v);
    for (const auto& p : r.problems) std::cerr << "atracectl: merge: " << TerminalLine(o.paths[b]) << ": " << p << "\n";
    if (!r.status.ok()) {
      std::cerr << "atracectl: merge: " << TerminalLine(o.paths[b]) << ": " << TerminalLine(r.status.message()) << "\n";
      ok = false;
    }
  }
  merger.FlagClocks();
  merger.DrawCollectives();
  return ok;
}

// Standard error: what was skipped, which hosts' clocks were not synchronized.
void SayProblems(const FleetGroups& groups, const Merger& merger) {
  for (const auto& p : merger.problems) std::cerr << "atracectl: merge: skipped " << TerminalLine(p) << "\n";
  for (const FleetBundle& fb : groups.bundles()) {
    if (fb.has_host && !fb.host.clock_synchronized.value_or(true)) {
      std::cerr << "atracectl: merge: " << TerminalLine(fb.path) << ": the clock of " << TerminalLine(fb.host.host)
                << " was not synchronized at export (adjtimex: " << TerminalLine(fb.host.adjtimex)
                << "): its times may be shifted against the other hosts'\n";
    }
  }
}

}  // namespace

int RunMerge(const Globals&, const Args& args) {
  int exit_code = kExitOk;
  const std::optional<MergeOptions> o = ParseOptions(args, &exit_code);
  if (!o) return exit_code;
  NewOutputFile out("merge", o->output);
  if (!out.ok()) return kExitFailed;
  FleetGroups groups(o->paths);
  Drawing drawing(*o, out);
  Merger merger(groups, o->chrome ? nullptr : &drawing.budget(), [&drawing](const TimelineEvent& ev) { drawing.Event(ev); });
  bool failed = !ReadBundles(*o, merger, drawing.budget());
  SayProblems(groups, merger);
  if (o->chrome) {
    drawing.ChromeEnd(groups, merger);
  } else {
    drawing.HtmlEnd(groups, merger);
    if (drawing.budget().reached) {
      std::cerr << "atracectl: merge: " << drawing.budget().Message(0, "merge fewer bundles or use --format chrome-json") << "\n";
      failed = true;
    }
  }
  const bool written = drawing.Flush();
  if (merger.duplicates) {
    std::cerr << "atracectl: merge: " << merger.duplicates << " record" << (merger.duplicates == 1 ? "" : "s")
              << " kept in more than one directory of a process, drawn once\n";
  }
  if (!written) return kExitFailed;
  out.Keep();
  std::cerr << "atracectl: merged " << groups.groups().size() << " processes of " << o->paths.size() << " bundle"
            << (o->paths.size() == 1 ? "" : "s") << " into " << TerminalLine(out.path()) << "\n";
  return failed ? kExitFailed : kExitOk;
}

}  // namespace atracectl
