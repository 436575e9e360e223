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
void ReleaseDumps(atrace::Client& client, const std::vector<atrace::ListEntry>& exported) {
  std::vector<std::string> dumps;
  for (const auto& e : exported) {
    if (e.flags & (ATRACE_LIST_DUMP | ATRACE_LIST_HANG)) dumps.push_back(e.path);
  }
  if (dumps.empty()) return;
  uint32_t released = 0, skipped = 0;
  if (auto ec = client.DumpsExported(dumps, &released, &skipped)) {
    std::cerr << "atracectl: export: the daemon keeps the " << dumps.size()
              << " dump(s) exported for its dump-keep span: " << TerminalLine(ec.message()) << "\n";
    return;
  }
  std::cerr << "atracectl: export: " << released << " dump director" << (released == 1 ? "y" : "ies")
            << " released from dump-keep: record-num may age them now\n";
}

// The page's top group: this host's name ("" when it has none).
std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

int RunExport(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
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
                         options, po::positional_options_description(), &exit_code);
  if (!vm) return exit_code;
  if (!vm->count("format")) return UsageError("export: give --format chrome-json, html or tar");
  const std::string format = (*vm)["format"].as<std::string>();
  if (format != "chrome-json" && format != "html" && format != "tar") {
    return UsageError("export: --format " + format + ": the formats are chrome-json, html and tar");
  }
  if (format == "tar" && !vm->count("output")) return UsageError("export: --format tar writes a file: give --output");
  uint64_t max_size = kDefaultBundleMaxSize;
  if (vm->count("max-size")) {
    const std::string text = (*vm)["max-size"].as<std::string>();
    const auto size = ParseSize(text);
    if (!size) {
      return UsageError("export: --max-size '" + text +
                        "' is not a size: use bytes or K, M, G, T (1024s), as '500M', '4G'");
    }
    if (format != "tar") return UsageError("export: --max-size bounds the --format tar bundle only");
    max_size = *size;
  }
  TextBudget budget;
  if (!ReadTextBudget(*vm, &budget, &exit_code)) return exit_code;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  ListFilter filter;
  if (!ReadFilter(*vm, static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000, &filter, &exit_code)) {
    return exit_code;
  }
  // The output first: made new before any other work, so that nothing planted at its name
  // later is written through (output_file.h).
  std::optional<NewOutputFile> out;
  if (vm->count("output")) {
    out.emplace("export", (*vm)["output"].as<std::string>());
    if (!out->ok()) return kExitFailed;
  }
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  atrace_status status{};
  if (auto ec = client.Status(&status)) return Fail(client, "status", ec);
  std::vector<atrace::ListEntry> all, chosen;
  if (auto ec = client.List(&all)) return Fail(client, "list", ec);
  for (auto& e : all) {
    if (filter.Matches(e)) chosen.push_back(std::move(e));
  }
  Readers::Of(std::string(status.root) + "/atrace").KeepReadable("export", &chosen);
  if (format == "tar") {
    const int written = WriteBundle(g, std::string(status.root) + "/atrace", chosen, max_size, *out);
    if (written == kExitOk) ReleaseDumps(client, chosen);  // a failed bundle releases nothing
    return written;
  }
  // The document is written as it is made, through a small buffer: what is held is the
  // events (bounded by the budget), never the document.
  std::string pending;
  bool write_failed = false;
  auto flush = [&] {
    for (size_t put = 0; put < pending.size() && !write_failed;) {
      const ssize_t n = ::write(out ? out->fd() : STDOUT_FILENO, pending.data() + put, pending.size() - put);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        std::cerr << "atracectl: export: " << TerminalLine(out ? out->path() : std::string("standard output")) << ": " << std::strerror(errno) << "\n";
        write_failed = true;
      }
      put += n > 0 ? static_cast<size_t>(n) : 0;
    }
    pending.clear();
  };
  auto put = [&](std::string_view piece) {
    pending.append(piece);
    if (pending.size() >= 64 * 1024) flush();
  };
  std::vector<std::string> problems;
  size_t files_total = 0;
  Timeline timeline;
  Progress progress("export");
  ReadTimeline(chosen, std::string(status.root) + "/atrace", budget, &problems, &files_total, &timeline,
               [&progress](size_t done, size_t total) { progress.Files(done, total); });
  progress.Done();
  if (format == "html") {
    WriteTimelinePage(timeline, HostName(), put);
  } else {
    WriteChromeTrace(timeline, put);
  }
  flush();
  for (const auto& p : problems) std::cerr << "atracectl: export: skipped " << TerminalLine(p) << "\n";
  if (budget.reached) {
    std::cerr << "atracectl: export: "
              << budget.Message(files_total, "narrow the selection (--pid, --uid, --kind, --side, --device, --since, "
                                             "--until)")
              << "\n";
  }
  if (write_failed) return kExitFailed;
  if (timeline.duplicates) {
    std::cerr << "atracectl: export: " << timeline.duplicates << " record" << (timeline.duplicates == 1 ? "" : "s")
              << " kept in more than one directory of a process, exported once\n";
  }
  if (out) {
    out->Keep();  // a document stopped at the text bound is still whole: kept
    std::cerr << "atracectl: wrote " << chosen.size() << " event director" << (chosen.size() == 1 ? "y" : "ies")
              << " to " << TerminalLine(out->path()) << "\n";
  }
  return budget.reached ? kExitFailed : kExitOk;
}

}  // namespace atracectl
