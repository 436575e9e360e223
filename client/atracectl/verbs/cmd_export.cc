// atracectl export [list's filters] --format chrome-json|html|tar [--output FILE]: the
// selected event directories' records as one Trace Event Format document, which the Perfetto
// UI and chrome://tracing open (trace_events.h), as one timeline page (timeline_html.h), or
// as a bug-report bundle (bundle.h). A bundle written and kept releases its dumps from the
// daemon's dump-keep (DUMPS_EXPORTED): the evidence is gathered, so record-num may age them.
// chrome-json and html are views of the records, not the evidence: they release nothing.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "files/bundle_writer.h"
#include "common/escape.h"
#include "common/command_line.h"
#include "daemon_talk/connect.h"
#include "verbs/verbs.h"
#include "files/readers.h"
#include "daemon_talk/list_filter.h"
#include "common/output_file.h"
#include "common/progress.h"
#include "common/text_budget.h"
#include "timeline/timeline_html.h"
#include "timeline/trace_events.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

// The bundle holds `exported`: the daemon's dump-keep spares their dumps no more. A daemon
// that cannot say so leaves them kept for dump-keep, which is said, not failed: the bundle is
// whole either way.
void ReleaseDumps(const Globals& g, const std::vector<atrace::ListEntry>& exported) {
  std::vector<std::string> dumps;
  for (const auto& e : exported) {
    if (e.flags & (ATRACE_LIST_DUMP | ATRACE_LIST_HANG)) dumps.push_back(e.path);
  }
  if (dumps.empty()) return;
  atrace::Client client = Connect(g);  // the selection's connection is closed by now
  if (!client) {
    std::cerr << "atracectl: export: the daemon keeps the " << dumps.size()
              << " dump(s) exported for its dump-keep span: it could not be told they were\n";
    return;
  }
  uint32_t released = 0, skipped = 0;
  if (auto ec = client.DumpsExported(dumps, &released, &skipped)) {
    std::cerr << "atracectl: export: the daemon keeps the " << dumps.size()
              << " dump(s) exported for its dump-keep span: " << TerminalLine(ec.message()) << "\n";
    return;
  }
  std::cerr << "atracectl: export: " << released << " dump director" << (released == 1 ? "y" : "ies")
            << " released from dump-keep: record-num may age them now\n";
}

// The dumps of the chosen directories' jobs that the daemon aged before this export
// (AGED_DUMPS), for bundle.jsonl's "aged" lines: `hang` then names their ranks aged, not
// missing. A daemon that cannot say is said, not failed: the bundle is whole without them.
std::vector<atrace::Client::AgedEntry> AgedOfJobs(const Globals& g, const std::vector<atrace::ListEntry>& chosen) {
  std::set<std::string> jobs;
  for (const auto& e : chosen) {
    if (!e.job.empty()) jobs.insert(e.job);
  }
  std::vector<atrace::Client::AgedEntry> all, kept;
  if (jobs.empty()) return kept;
  atrace::Client client = Connect(g);
  uint32_t omitted = 0;
  if (!client) return kept;
  if (auto ec = client.AgedDumps(jobs.size() == 1 ? *jobs.begin() : std::string(), &all, &omitted)) {
    std::cerr << "atracectl: export: the daemon cannot say which dumps it aged (" << TerminalLine(ec.message())
              << "): hang will call the ranks of such dumps missing\n";
    return kept;
  }
  for (auto& a : all) {
    if (jobs.count(a.job)) kept.push_back(std::move(a));
  }
  if (!kept.empty()) {
    std::cerr << "atracectl: export: " << kept.size() << " dump(s) of the job(s) were aged by the daemon before this "
              << "export (" << omitted << " more past its bound): recorded in bundle.jsonl for hang\n";
  }
  return kept;
}

// An export of nothing is an error, not an empty bundle that reads as "nothing happened".
int NothingSelected() {
  std::cerr << "atracectl: export: no event directory you may read matches: nothing to export. A hung job is "
               "dumped first ('atracectl dump --job J', or the daemon's hang watch); 'atracectl list' shows "
               "what there is\n";
  return kExitFailed;
}

// The page's top group: this host's name ("" when it has none).
std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

struct ExportOptions {
  std::string format;  // chrome-json, html or tar
  uint64_t max_size = kDefaultBundleMaxSize;
  TextBudget budget;
  ListFilter filter;
  std::optional<std::string> output;
};

std::optional<ExportOptions> ParseOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("format", po::value<std::string>(),
                        "chrome-json: the Trace Event Format (Perfetto, chrome://tracing); html: one self-contained "
                        "timeline page; tar: a .tar.gz bug-report bundle (needs --output)")(
      "output,o", po::value<std::string>(),
      "write to FILE (made new with mode 0640, before anything else: never over an existing file or through a "
      "link); default: standard output")(
      "max-size", po::value<std::string>(),
      "tar: stop and fail when the bundle (before gzip) would pass SIZE ('500M', '4G'; default 1G)");
  AddFilterOptions(options);
  AddTextBudgetOption(options);
  auto vm = ParseCommand(args,
                         "Usage: atracectl [--socket PATH] export --format chrome-json|html|tar [--output FILE] "
                         "[--max-size SIZE] [--pid N] [--uid N] [--comm NAME] [--job J] [--rank R] [--kind KIND] [--side SIDE] "
                         "[--device N] [--since TIME] [--until TIME] [--max-text-mib N]",
                         options, po::positional_options_description(), exit_code);
  if (!vm) return std::nullopt;
  auto usage = [exit_code](const std::string& message) {
    *exit_code = UsageError(message);
    return std::nullopt;
  };
  if (!vm->count("format")) return usage("export: give --format chrome-json, html or tar");
  ExportOptions o;
  o.format = (*vm)["format"].as<std::string>();
  if (o.format != "chrome-json" && o.format != "html" && o.format != "tar") {
    return usage("export: --format " + o.format + ": the formats are chrome-json, html and tar");
  }
  if (o.format == "tar" && !vm->count("output")) return usage("export: --format tar writes a file: give --output");
  if (vm->count("max-size")) {
    const std::string text = (*vm)["max-size"].as<std::string>();
    const auto size = ParseSize(text);
    if (!size) {
      return usage("export: --max-size '" + text + "' is not a size: use bytes or K, M, G, T (1024s), as '500M', '4G'");
    }
    if (o.format != "tar") return usage("export: --max-size bounds the --format tar bundle only");
    o.max_size = *size;
  }
  if (!ReadTextBudget(*vm, &o.budget, exit_code)) return std::nullopt;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  if (!ReadFilter(*vm, static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000, &o.filter, exit_code)) {
    return std::nullopt;
  }
  if (vm->count("output")) o.output = (*vm)["output"].as<std::string>();
  return o;
}

// The event directories the filter chooses and this user may read, and the trace directory
// they are in; kExitOk, or the exit code after saying why.
int Select(const Globals& g, const ListFilter& filter, std::string* trace_dir, std::vector<atrace::ListEntry>* chosen) {
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  atrace_status status{};
  if (auto ec = client.Status(&status)) return Fail(client, "status", ec);
  std::vector<atrace::ListEntry> all;
  if (auto ec = client.List(&all)) return Fail(client, "list", ec);
  for (auto& e : all) {
    if (filter.Matches(e)) chosen->push_back(std::move(e));
  }
  *trace_dir = std::string(status.root) + "/atrace";
  Readers::Of(*trace_dir).KeepReadable("export", chosen);
  return kExitOk;
}

// The document, written as it is made through a small buffer (to the output file, else
// standard output): what is held is the events (bounded by the budget), never the document.
class Document {
 public:
  explicit Document(const std::optional<NewOutputFile>& out) : out_(out) {}

  void Put(std::string_view piece) {
    pending_.append(piece);
    if (pending_.size() >= 64 * 1024) Flush();
  }
  // Writes what is buffered; false when a write failed (now or before), after saying why.
  bool Flush() {
    for (size_t put = 0; put < pending_.size() && !write_failed_;) {
      const ssize_t n = ::write(out_ ? out_->fd() : STDOUT_FILENO, pending_.data() + put, pending_.size() - put);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        std::cerr << "atracectl: export: " << TerminalLine(out_ ? out_->path() : std::string("standard output")) << ": "
                  << std::strerror(errno) << "\n";
        write_failed_ = true;
      }
      put += n > 0 ? static_cast<size_t>(n) : 0;
    }
    pending_.clear();
    return !write_failed_;
  }

 private:
  const std::optional<NewOutputFile>& out_;
  std::string pending_;
  bool write_failed_ = false;
};

// Standard error: what was skipped, and where the text bound stopped the reading.
void SayProblems(const std::vector<std::string>& problems, const TextBudget& budget, size_t files_total) {
  for (const auto& p : problems) std::cerr << "atracectl: export: skipped " << TerminalLine(p) << "\n";
  if (budget.reached) {
    std::cerr << "atracectl: export: "
              << budget.Message(files_total, "narrow the selection (--pid, --uid, --kind, --side, --device, --since, "
                                             "--until)")
              << "\n";
  }
}

// The chosen directories' records as one chrome-json or html document.
int WriteDocument(ExportOptions& o, const std::string& trace_dir, const std::vector<atrace::ListEntry>& chosen,
                  std::optional<NewOutputFile>& out) {
  Document doc(out);
  auto put = [&doc](std::string_view piece) { doc.Put(piece); };
  std::vector<std::string> problems;
  size_t files_total = 0;
  Timeline timeline;
  Progress progress("export");
  ReadTimeline(chosen, trace_dir, o.budget, &problems, &files_total, &timeline,
               [&progress](size_t done, size_t total) { progress.Files(done, total); });
  progress.Done();
  if (o.format == "html") {
    WriteTimelinePage(timeline, HostName(), put);
  } else {
    WriteChromeTrace(timeline, put);
  }
  const bool written = doc.Flush();
  SayProblems(problems, o.budget, files_total);
  if (!written) return kExitFailed;
  if (timeline.duplicates) {
    std::cerr << "atracectl: export: " << timeline.duplicates << " record" << (timeline.duplicates == 1 ? "" : "s")
              << " kept in more than one directory of a process, exported once\n";
  }
  if (out) {
    out->Keep();  // a document stopped at the text bound is still whole: kept
    std::cerr << "atracectl: wrote " << chosen.size() << " event director" << (chosen.size() == 1 ? "y" : "ies")
              << " to " << TerminalLine(out->path()) << "\n";
  }
  return o.budget.reached ? kExitFailed : kExitOk;
}

}  // namespace

int RunExport(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  std::optional<ExportOptions> o = ParseOptions(args, &exit_code);
  if (!o) return exit_code;
  // The output first: made new before any other work, so that nothing planted at its name
  // later is written through (output_file.h).
  std::optional<NewOutputFile> out;
  if (o->output) {
    out.emplace("export", *o->output);
    if (!out->ok()) return kExitFailed;
  }
  std::string trace_dir;
  std::vector<atrace::ListEntry> chosen;
  if (int selected = Select(g, o->filter, &trace_dir, &chosen); selected != kExitOk) return selected;
  if (chosen.empty()) return NothingSelected();
  if (o->format == "tar") {
    const int written = WriteBundle(g, trace_dir, chosen, AgedOfJobs(g, chosen), o->max_size, *out);
    if (written == kExitOk) ReleaseDumps(g, chosen);  // a failed bundle releases nothing
    return written;
  }
  return WriteDocument(*o, trace_dir, chosen, out);
}

}  // namespace atracectl
