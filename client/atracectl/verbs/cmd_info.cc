// atracectl info PID|--seq SEQ|--comm NAME [--json]: what the daemon's directories say of one process, in the
// manner of coredumpctl info (issue 26): its events with their times, and from its reports
// (a crash, a death without GOODBYE, a stack dump) the program, command line, signal, code,
// fault address, how it ended, the OOM verdict and the top frames.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "daemon_talk/connect.h"
#include "verbs/verbs.h"
#include "files/dir_files.h"
#include "common/escape.h"
#include "common/format.h"
#include "daemon_talk/list_columns.h"
#include "files/readers.h"
#include "files/stack_report.h"
#include "files/ledger_text.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

constexpr size_t kTopFrames = 8;
constexpr size_t kDumpFrames = 32;  // per thread, for a dump's stacks (kept apart from the header's cap)

// What a stackcore report says, by its "key: value" header lines and its [stack] section.
struct Report {
  std::string file;
  std::string error;  // why it could not be read ("" when read): never shown as an empty report
  std::map<std::string, std::string> facts;  // signal, code, fault address, how, oom, ...
  std::vector<std::string> frames;           // the first kTopFrames frame lines of Thread 1
  std::vector<ThreadLines> threads;          // every thread as written (files/stack_report.h), shown for a dump
  bool dump() const { return facts.count("dumped by") > 0; }
};

const char* const kShownFacts[] = {"program", "command line", "signal", "code", "fault address",
                                   "thread", "how", "oom", "dumped by", "stacks"};

// A report's header and stack are at its start: this much of each file is read, and a value
// is shown up to kMaxValue bytes (its files are any size its process wrote).
constexpr size_t kReportHead = 1u << 20;
constexpr size_t kMaxValue = 4096;
constexpr size_t kMaxReportFile = 64u << 20;

std::string Capped(std::string_view line) {
  return line.size() <= kMaxValue ? std::string(line) : std::string(line.substr(0, kMaxValue)) + "...(cut)";
}

Report ReadReport(const std::string& path, const std::string& name) {
  Report r;
  r.file = name;
  std::string head;
  bool more = false;
  if (const atraced::Status st = ReadUpTo(path, kMaxReportFile, kReportHead, &head, &more); !st.ok()) {
    r.error = st.message();
    return r;
  }
  std::string_view text = head;
  r.threads = ThreadLinesOf(head, kDumpFrames);
  // The top frames: those of the crashing thread, Thread 1, the first.
  for (const ThreadLines& t : r.threads) {
    if (t.header.rfind("Thread 1 ", 0) != 0) break;
    for (size_t f = 0; f < t.frames.size() && r.frames.size() < kTopFrames; ++f) r.frames.push_back(t.frames[f]);
  }
  bool in_stack = false;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line[0] == '[') {
      in_stack = line == "[stack]";
      continue;
    }
    if (in_stack) continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos || colon > 20) continue;
    const std::string key(line.substr(0, colon));
    if (r.facts.count(key) || std::find(std::begin(kShownFacts), std::end(kShownFacts), key) == std::end(kShownFacts)) {
      continue;
    }
    r.facts[key] = Capped(line.substr(colon + 2));
  }
  return r;
}

// The stackcore report files of an event directory (the .txt; a stack dump's .bin has the
// same text beside it).
std::vector<Report> Reports(const std::string& dir) {
  std::vector<std::string> names;
  int err = 0;
  const std::vector<std::string> all = SortedNames(dir, &err);
  if (err != 0) return {Report{"(the directory)", std::strerror(err), {}, {}, {}}};  // its reports cannot even be named
  for (const std::string& n : all) {
    if (n.rfind("stackcore_tracer_", 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".txt") == 0) {
      names.push_back(n);
    }
  }
  std::vector<Report> out;
  for (const auto& n : names) out.push_back(ReadReport(dir + "/" + n, n));
  return out;
}

// Said wherever report text is shown: a process may write a file of the report's form itself
// (FILE_OPEN, stackcore form), and nothing on disk tells it from the daemon's own report.
constexpr const char* kReportsAre =
    "what the stackcore_tracer_*.txt files of the event directories say, shown escaped: the daemon writes "
    "such a file for a crash, a death or a stack dump, and a process may write one itself, so it is the "
    "file's word, not a crash atraced saw";

// The process `--seq` or `--comm` names: that of directory `seq`, or the latest of `comm`
// (standard error says when other processes ran it too). False after saying there is none.
bool ChooseProcess(const std::vector<atrace::ListEntry>& all, uint64_t seq, const std::string& comm, long* pid) {
  const atrace::ListEntry* chosen = nullptr;
  std::map<int32_t, int> pids;
  for (const auto& e : all) {
    if (seq != 0 ? e.seq != seq : e.comm != comm) continue;
    ++pids[e.pid];
    if (!chosen || e.created_unix_us >= chosen->created_unix_us) chosen = &e;
  }
  if (!chosen) {
    if (seq != 0) {
      std::cerr << "atracectl: info: no event directory has SEQ " << seq
                << " (it was aged or vacuumed, or never was; 'atracectl list' prints the ones there are)\n";
    } else {
      std::cerr << "atracectl: info: no event directory of a process named " << TerminalLine(comm)
                << " ('atracectl list' shows each directory's COMM)\n";
    }
    return false;
  }
  if (pids.size() > 1) {
    std::cerr << "atracectl: info: " << pids.size() << " processes named " << TerminalLine(comm)
              << " have event directories; this is the latest, pid " << chosen->pid << " (give a PID for another)\n";
  }
  *pid = chosen->pid;
  return true;
}

// Which process: a PID, or the process of --seq, or the latest of --comm.
struct InfoOptions {
  long pid = 0;
  uint64_t seq = 0;
  std::string comm;
  bool json = false;
};

std::optional<InfoOptions> ParseOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "one JSON object")(
      "pid", po::value<std::string>(), "the process (also the command's one argument)")(
      "seq", po::value<std::string>(), "the process that made the event directory SEQ (from 'atracectl list')")(
      "comm", po::value<std::string>(), "the latest process of this COMM (as 'atracectl list' shows it)");
  po::positional_options_description positional;
  positional.add("pid", 1);
  auto vm = ParseCommand(args, "Usage: atracectl [--socket PATH] info PID|--seq SEQ|--comm NAME [--json]", options,
                         positional, exit_code);
  if (!vm) return std::nullopt;
  auto usage = [exit_code](const std::string& message) {
    *exit_code = UsageError(message);
    return std::nullopt;
  };
  const size_t given = vm->count("pid") + vm->count("seq") + vm->count("comm");
  if (given == 0) return usage("info: give the PID of a process with event directories, --seq SEQ or --comm NAME");
  if (given > 1) return usage("info: give one of PID, --seq SEQ and --comm NAME");
  InfoOptions o;
  o.json = (*vm)["json"].as<bool>();
  if (vm->count("pid")) {
    const std::string pid_text = (*vm)["pid"].as<std::string>();
    char* end = nullptr;
    o.pid = std::strtol(pid_text.c_str(), &end, 10);
    if (pid_text.empty() || *end != '\0' || o.pid <= 0 || o.pid > 0x3fffffff) {
      return usage("info: '" + TerminalLine(pid_text) + "' is not a process id");
    }
  }
  if (vm->count("seq")) {
    const std::string seq_text = (*vm)["seq"].as<std::string>();
    char* end = nullptr;
    o.seq = std::strtoull(seq_text.c_str(), &end, 10);
    if (seq_text.empty() || seq_text[0] == '-' || *end != '\0' || o.seq == 0) {
      return usage("info: --seq '" + TerminalLine(seq_text) + "' is not a SEQ (a number 'atracectl list' prints)");
    }
  }
  o.comm = vm->count("comm") ? (*vm)["comm"].as<std::string>() : "";
  if (vm->count("comm") && o.comm.empty()) return usage("info: --comm needs a name");
  return o;
}

// What is known of the process: its directories (which this user may read) and their reports.
struct ProcessInfo {
  long pid = 0;
  std::string trace;                            // <root>/atrace/
  std::vector<atrace::ListEntry> mine;          // its event directories, in creation order
  std::vector<std::vector<Report>> reports;     // per directory
  std::map<std::string, std::string> process;   // the first report's program and command line
  std::map<std::string, int> kinds;
  bool unreadable = false;  // a report there is but could not be read: said, and exit 1
  std::optional<atraced::proto::LedgerSnapshot> ledger;  // the latest collective ledger saved
  uint64_t ledger_seq = 0;                                // the directory it was saved in
};

// The process's directories from the daemon; kExitOk, or the exit code after saying why not.
int Gather(const Globals& g, const InfoOptions& o, ProcessInfo* info) {
  long pid = o.pid;
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  atrace_status status{};
  if (auto ec = client.Status(&status)) return Fail(client, "status", ec);
  std::vector<atrace::ListEntry> all;
  if (auto ec = client.List(&all)) return Fail(client, "list", ec);
  const Readers readers = Readers::Of(std::string(status.root) + "/atrace");
  if (!o.comm.empty()) {  // the latest process of that name this user may read
    all.erase(std::remove_if(all.begin(), all.end(), [&](const atrace::ListEntry& e) { return !readers.Reads(e.uid); }),
              all.end());
  }
  if (o.seq != 0 || !o.comm.empty()) {
    if (!ChooseProcess(all, o.seq, o.comm, &pid)) return kExitFailed;
  }
  for (auto& e : all) {
    if (e.pid == pid) info->mine.push_back(std::move(e));
  }
  if (info->mine.empty()) {
    std::cerr << "atracectl: info: no event directory of pid " << pid
              << " (none was made, or all were aged; 'atracectl list' shows what there is)\n";
    return kExitFailed;
  }
  for (const auto& e : info->mine) {
    if (!readers.Reads(e.uid)) {
      std::cerr << "atracectl: info: " << readers.BelongsTo(e.seq, e.uid) << "\n";
      return kExitFailed;
    }
  }
  info->pid = pid;
  info->trace = std::string(status.root) + "/atrace/";
  return kExitOk;
}

// The reports of each of its directories.
void ReadReports(ProcessInfo* info) {
  for (const auto& e : info->mine) {
    info->reports.push_back(Reports(info->trace + e.path));
    for (const auto& r : info->reports.back()) info->unreadable = info->unreadable || !r.error.empty();
    ++info->kinds[std::string(KindName(e.kind))];
    for (const auto& r : info->reports.back()) {
      for (const char* key : {"program", "command line"}) {
        if (!info->process.count(key) && r.facts.count(key)) info->process[key] = r.facts.at(key);
      }
    }
  }
}

// The collectives, from the latest ledger saved (each save holds the whole ledger).
void ReadLatestLedger(ProcessInfo* info) {
  for (size_t i = info->mine.size(); i-- > 0 && !info->ledger;) {
    const std::string path = info->trace + info->mine[i].path + "/" + std::string(atraced::proto::kLedgerFileName);
    if (::access(path.c_str(), F_OK) != 0) continue;
    std::string why;
    info->ledger.emplace();
    if (!atraced::proto::ReadLedgerFile(path, &*info->ledger, &why)) info->ledger->problems.push_back(why);
    info->ledger_seq = info->mine[i].seq;
  }
}

void PrintJson(const ProcessInfo& info) {
  const long pid = info.pid;
  const auto& mine = info.mine;
  const auto& reports = info.reports;
  const std::string& trace = info.trace;
  std::cout << "{\"pid\":" << pid << ",\"uid\":" << mine.front().uid;
  if (info.ledger) std::cout << ",\"collectives\":" << LedgerSummaryJson(*info.ledger, info.ledger_seq);
  for (const auto& [k, v] : info.process) std::cout << "," << JsonString(k == "command line" ? "command_line" : k) << ":" << JsonString(v);
  std::cout << ",\"reports_are\":" << JsonString(kReportsAre);
  std::cout << ",\"first_unix_us\":" << mine.front().created_unix_us << ",\"last_unix_us\":" << mine.back().created_unix_us
            << ",\"events\":[";
  for (size_t i = 0; i < mine.size(); ++i) {
    const auto& e = mine[i];
    std::cout << (i ? "," : "") << "{\"seq\":" << e.seq << ",\"kind\":" << JsonString(KindName(e.kind))
              << ",\"created_unix_us\":" << e.created_unix_us << ",\"path\":" << JsonString(trace + e.path)
              << ",\"reports\":[";
    for (size_t k = 0; k < reports[i].size(); ++k) {
      const Report& r = reports[i][k];
      std::cout << (k ? "," : "") << "{\"file\":" << JsonString(r.file);
      if (!r.error.empty()) std::cout << ",\"error\":" << JsonString(r.error);
      for (const char* key : kShownFacts) {
        if (r.facts.count(key)) {
          std::string json_key = key;
          std::replace(json_key.begin(), json_key.end(), ' ', '_');
          std::cout << "," << JsonString(json_key) << ":" << JsonString(r.facts.at(key));
        }
      }
      std::cout << ",\"top_frames\":[";
      for (size_t f = 0; f < r.frames.size(); ++f) std::cout << (f ? "," : "") << JsonString(r.frames[f]);
      std::cout << "]";
      if (r.dump()) {
        std::cout << ",\"stacks\":[";
        for (size_t t = 0; t < r.threads.size(); ++t) {
          std::cout << (t ? "," : "") << "{\"thread\":" << JsonString(r.threads[t].header) << ",\"frames\":[";
          for (size_t f = 0; f < r.threads[t].frames.size(); ++f) {
            std::cout << (f ? "," : "") << JsonString(r.threads[t].frames[f]);
          }
          std::cout << "],\"notes\":[";
          for (size_t n = 0; n < r.threads[t].notes.size(); ++n) std::cout << (n ? "," : "") << JsonString(r.threads[t].notes[n]);
          std::cout << "]}";
        }
        std::cout << "]";
      }
      std::cout << "}";
    }
    std::cout << "]}";
  }
  std::cout << "]}\n";
}

void PrintText(const ProcessInfo& info) {
  const long pid = info.pid;
  const auto& mine = info.mine;
  const auto& reports = info.reports;
  const std::string& trace = info.trace;
  std::map<std::string, std::string> process = info.process;
  std::string counts;
  for (const auto& [k, n] : info.kinds) counts += (counts.empty() ? "" : ", ") + k + " " + std::to_string(n);
  auto from_report = [&process](const char* key, const char* none) {
    return process.count(key) ? TerminalLine(process[key]) + "  (as a report says)" : std::string(none);
  };
  std::cout << "           PID: " << pid << "\n"
            << "           UID: " << mine.front().uid << "\n"
            << "       Program: " << from_report("program", "(no report names it)") << "\n"
            << "  Command line: " << from_report("command line", "(no report has it)") << "\n"
            << "        Events: " << mine.size() << " (" << counts << "), " << LocalTimeColumn(mine.front().created_unix_us)
            << " to " << LocalTimeColumn(mine.back().created_unix_us) << "\n";
  bool any_report = false;
  const Report* latest_dump = nullptr;
  for (const auto& in_dir : reports) {
    for (const Report& r : in_dir) {
      if (r.dump()) latest_dump = &r;
    }
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    const auto& e = mine[i];
    std::cout << "\n  SEQ " << e.seq << "  " << KindName(e.kind) << "  " << LocalTimeColumn(e.created_unix_us) << "  "
              << TerminalLine(trace + e.path) << "\n";
    for (const Report& r : reports[i]) {
      any_report = true;
      std::cout << "        Report: " << TerminalLine(r.file) << "\n";
      if (!r.error.empty()) {
        std::cout << "         Error: cannot read it: " << TerminalLine(r.error) << "\n";
        std::cerr << "atracectl: info: a report of pid " << pid << " cannot be read: "
                  << TerminalLine(trace + e.path + "/" + r.file) << ": " << TerminalLine(r.error) << "\n";
        continue;
      }
      for (const char* key : {"signal", "code", "fault address", "thread", "how", "oom", "dumped by", "stacks"}) {
        if (!r.facts.count(key)) continue;
        std::string label = key;
        label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[0])));
        std::cout << std::string(label.size() < 14 ? 14 - label.size() : 0, ' ') << label << ": "
                  << TerminalLine(r.facts.at(key)) << "\n";
      }
      if (&r == latest_dump) {
        std::cout << "  Thread stacks:  (the latest dump, thread by thread)\n";
        for (const ThreadLines& t : r.threads) {
          std::cout << "      " << TerminalLine(t.header) << "\n";
          for (const auto& f : t.frames) std::cout << "        " << TerminalLine(f) << "\n";
          for (const auto& n : t.notes) std::cout << "        " << TerminalLine(n) << "\n";
        }
      } else if (!r.frames.empty()) {
        std::cout << "    Top frames:\n";
        for (const auto& f : r.frames) std::cout << "      " << TerminalLine(f) << "\n";
      }
    }
  }
  if (info.ledger) {
    std::cout << "\n   Collectives: (the ledger of SEQ " << info.ledger_seq << ")\n"
              << LedgerSummaryText(*info.ledger, "      ");
  }
  if (any_report) std::cout << "\n  Reports are " << kReportsAre << ".\n";
}

}  // namespace

int RunInfo(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  const std::optional<InfoOptions> o = ParseOptions(args, &exit_code);
  if (!o) return exit_code;
  ProcessInfo info;
  if (const int gathered = Gather(g, *o, &info); gathered != kExitOk) return gathered;
  ReadReports(&info);
  ReadLatestLedger(&info);
  if (o->json) {
    PrintJson(info);
  } else {
    PrintText(info);
  }
  return info.unreadable ? kExitFailed : kExitOk;
}

}  // namespace atracectl
