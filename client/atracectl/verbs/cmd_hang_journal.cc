// atracectl hang --journal DIR [--job J] [--json] [--follow [--quiet S]] [--exec CMD]: the
// report of a hung job from atraced's hang entries alone, as systemd-journal-remote wrote
// them on a collector (journal_reader.h, journal_report.h). No bundle is needed.
//   - without --follow: every job with hang entries (or J), one report each; none is an error
//     with a hint (exit 1), so that an empty collector never looks like a healthy job;
//   - --follow: waits for new entries (sd_journal_wait) and reports a job once no new hang
//     entry of it came for --quiet seconds; again when new ones come (a new stall);
//   - --exec CMD: after a job's report, runs the operator's fan-out for it (exec_job.h).
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "common/child_process.h"
#include "common/command_line.h"
#include "common/escape.h"
#include "journal/exec_job.h"
#include "journal/journal_reader.h"
#include "journal/journal_report.h"
#include "verbs/verbs.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

using namespace journal;
using Clock = std::chrono::steady_clock;

constexpr int kDefaultQuietS = 5;

struct JournalOptions {
  std::string dir, job, exec;
  bool json = false, follow = false;
  std::chrono::seconds quiet{kDefaultQuietS};
};

}  // namespace

po::options_description HangJournalOptions() {
  po::options_description options("the journal form (atracectl hang --journal DIR ...)");
  options.add_options()("journal", po::value<std::string>(), "a journal directory (systemd-journal-remote's)")(
      "job", po::value<std::string>(), "only this job's entries")(
      "follow", po::bool_switch(), "wait for new entries; report each job once it is quiet")(
      "quiet", po::value<int>()->default_value(kDefaultQuietS),
      "with --follow: seconds without a new hang entry of a job before it is reported")(
      "exec", po::value<std::string>(),
      "after a job's report, run CMD with /bin/sh -c; %j: the job, %h: a file of its hosts (passed as \"$1\", \"$2\")");
  return options;
}

namespace {

std::optional<JournalOptions> ParseOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "one JSON object per job");
  options.add(HangJournalOptions());
  po::positional_options_description positional;
  auto vm = ParseCommand(args,
                         "Usage: atracectl hang --journal DIR [--job J] [--json] [--follow [--quiet S]] [--exec CMD]\n"
                         "Which ranks of a hung job are stuck where, from the hang entries atraced wrote to the "
                         "journal (a collector's systemd-journal-remote directory).",
                         options, positional, exit_code);
  if (!vm) return std::nullopt;
  if (!vm->count("journal")) {
    *exit_code = UsageError("hang: --journal needs a directory");
    return std::nullopt;
  }
  JournalOptions o;
  o.dir = (*vm)["journal"].as<std::string>();
  if (vm->count("job")) o.job = (*vm)["job"].as<std::string>();
  if (vm->count("exec")) o.exec = (*vm)["exec"].as<std::string>();
  o.json = (*vm)["json"].as<bool>();
  o.follow = (*vm)["follow"].as<bool>();
  const int quiet = (*vm)["quiet"].as<int>();
  if (quiet < 0 || quiet > 86400) {
    *exit_code = UsageError("hang: --quiet takes 0 to 86400 seconds");
    return std::nullopt;
  }
  o.quiet = std::chrono::seconds(quiet);
  if (o.exec.empty() && vm->count("exec")) {
    *exit_code = UsageError("hang: --exec needs a command");
    return std::nullopt;
  }
  return o;
}

// Prints the job's report and runs --exec for it.
void Report(const JournalOptions& o, const std::string& job, const JobEntries& entries, const JournalBook& book) {
  std::cout << (o.json ? JobReportJson(job, entries, book) : JobReportText(job, entries, book) + "\n") << std::flush;
  if (o.exec.empty()) return;
  size_t unsafe = 0;
  std::string error;
  const int status = RunJobCommand(o.exec, job, JobHosts(entries, &unsafe), &error);
  if (status < 0) {
    std::cerr << "atracectl: hang: --exec for job " << TerminalLine(job) << ": " << TerminalLine(error) << "\n";
  } else if (status != 0) {
    std::cerr << "atracectl: hang: --exec for job " << TerminalLine(job) << " " << ChildOutcome(status, true) << "\n";
  }
}

size_t JobsWithHangs(const JournalBook& book) {
  size_t n = 0;
  for (const auto& [job, entries] : book.jobs) n += entries.hangs.empty() ? 0 : 1;
  return n;
}

int NothingToReport(const JournalOptions& o, const JournalBook& book) {
  std::cerr << "atracectl: hang: no hang entry of atraced" << (o.job.empty() ? "" : " for job " + TerminalLine(o.job))
            << " in " << TerminalLine(o.dir);
  if (book.forged) std::cerr << " (" << book.forged << " forged entries ignored)";
  if (book.malformed) std::cerr << " (" << book.malformed << " malformed entries ignored)";
  std::cerr << "\n";
  if (!o.job.empty()) {
    std::cerr << "hint: 'atracectl hang --journal " << TerminalLine(o.dir)
              << "' without --job lists every job with hang entries; ";
  } else {
    std::cerr << "hint: ";
  }
  std::cerr << "atraced writes one when a labelled process stalls for hang-timeout (atraced.conf); check that the "
               "hosts' journals reach this directory: journalctl -D "
            << TerminalLine(o.dir) << " ATRACE_EVENT=start\n";
  return kExitFailed;
}

}  // namespace

int RunHangJournal(const Globals&, const Args& args) {
  int exit_code = kExitOk;
  std::optional<JournalOptions> o = ParseOptions(args, &exit_code);
  if (!o) return exit_code;
  std::string error;
  std::optional<HangJournal> journal = HangJournal::Open(o->dir, o->job, &error);
  if (!journal) {
    std::cerr << "atracectl: hang: " << TerminalLine(o->dir) << ": " << TerminalLine(error) << "\n";
    return kExitFailed;
  }
  JournalBook book;
  journal->ReadNew(&book, &error);
  if (!error.empty()) {
    std::cerr << "atracectl: hang: " << TerminalLine(o->dir) << ": " << TerminalLine(error) << "\n";
    return kExitFailed;
  }
  if (!o->follow) {
    if (JobsWithHangs(book) == 0) return NothingToReport(*o, book);
    for (const auto& [job, entries] : book.jobs) {
      if (!entries.hangs.empty()) Report(*o, job, entries, book);
    }
    return kExitOk;
  }
  std::map<std::string, Clock::time_point> reported;  // job -> the last hang entry it was reported with
  for (;;) {
    const Clock::time_point now = Clock::now();
    Clock::duration wait = std::chrono::minutes(1);
    for (const auto& [job, entries] : book.jobs) {
      if (entries.hangs.empty()) continue;
      auto it = reported.find(job);
      if (it != reported.end() && it->second == entries.last_hang) continue;
      const Clock::duration quiet_for = now - entries.last_hang;
      if (quiet_for >= o->quiet) {
        Report(*o, job, entries, book);
        reported[job] = entries.last_hang;
      } else {
        wait = std::min(wait, o->quiet - quiet_for);
      }
    }
    if (!journal->Wait(std::chrono::ceil<std::chrono::milliseconds>(wait), &error) ||
        (journal->ReadNew(&book, &error), !error.empty())) {
      std::cerr << "atracectl: hang: " << TerminalLine(o->dir) << ": " << TerminalLine(error) << "\n";
      return kExitFailed;
    }
  }
}

}  // namespace atracectl
