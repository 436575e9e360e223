// atracectl show SEQ|DIR [--json]: one event directory's files, decoded (issue 26).
//   .txt (records, stackcore reports)  as they are;
//   .bin of an object                  the text CANN's asys writes for it (cann_bin_text.h);
//   .bin of a stack dump               the report it holds (stack_dump_file.h);
//   hccl_tracer_ledger.bin             the collective ledger, a line per call (ledger_text.h).
// SEQ is the number `atracectl list` prints; DIR a path to an event directory (any other
// directory is refused).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "atraced/proto/cann_bin_text.h"
#include "atraced/proto/ledger_reader.h"
#include "atraced/proto/stack_dump_file.h"
#include "common/command_line.h"
#include "daemon_talk/connect.h"
#include "verbs/verbs.h"
#include "files/dir_files.h"
#include "common/format.h"
#include "files/readers.h"
#include "common/text_budget.h"
#include "files/ledger_text.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

constexpr size_t kMaxFileBytes = 64u << 20;  // a trace file is at most a ring, or a report

struct Shown {
  std::string text;   // what a reader sees (the file's own bytes: escaped when written)
  std::string error;  // why it could not be read or decoded ("" when shown)
  std::string how;    // "text", "cann-bin" (as asys writes it), "stack-dump", "hccl-ledger"
  bool cut = false;   // the text bound was reached inside this file
  bool escaped = false;  // the decoder escaped what came from outside already (the ledger's names)
};

int32_t LocalUtcOffsetNow() {
  const time_t now = ::time(nullptr);
  struct tm local {};
  ::localtime_r(&now, &local);
  return static_cast<int32_t>(local.tm_gmtoff);
}

bool EndsWith(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// Keeps of `text` what fits in the budget; when it does not all fit, or `cut` says the file
// has more, only its whole lines, and the budget is reached.
void Charge(TextBudget& budget, std::string* text, bool* cut) {
  if (*cut || text->size() > budget.left()) {
    const size_t keep = std::min(text->size(), budget.left());
    const size_t line_end = keep == 0 ? std::string::npos : text->rfind('\n', keep - 1);
    text->resize(line_end == std::string::npos ? 0 : line_end + 1);
    *cut = budget.reached = true;
  }
  budget.used += text->size();
}

// One file of the directory, decoded, within what is left of the budget.
Shown Show(const std::string& dir, const std::string& name, TextBudget& budget) {
  Shown s;
  std::string bytes;
  ++budget.files_read;
  if (!EndsWith(name, ".bin")) {
    s.how = "text";
    if (const atraced::Status st = ReadUpTo(dir + "/" + name, kMaxFileBytes, budget.left(), &s.text, &s.cut); st.ok()) {
      Charge(budget, &s.text, &s.cut);
    } else {
      s.error = st.message();
    }
    return s;
  }
  if (const atraced::Status st = ReadWhole(dir + "/" + name, kMaxFileBytes, &bytes); !st.ok()) {
    s.error = st.message();
    return s;
  }
  const std::span<const uint8_t> raw(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (name == atraced::proto::kLedgerFileName) {
    s.how = "hccl-ledger";
    s.text = LedgerText(atraced::proto::ReadLedger(raw));
    s.escaped = true;
  } else if (name.rfind("stackcore_tracer_", 0) == 0) {
    s.how = "stack-dump";
    if (!atraced::proto::DecodeStackDumpFile(raw, &s.text, &s.error)) s.error = "not a stack dump: " + s.error;
  } else {
    s.how = "cann-bin";
    auto decoded = atraced::proto::CannBinToText(raw, LocalUtcOffsetNow(), budget.left());
    if (decoded.ok) {
      s.text = std::move(decoded.text);
      s.cut = decoded.stopped;
      if (!decoded.warning.empty() && !s.cut) s.text += "(asys would warn: " + decoded.warning + ")\n";
    } else {
      s.error = "cannot decode as asys would: " + decoded.error;
    }
  }
  if (s.error.empty()) Charge(budget, &s.text, &s.cut);
  return s;
}

// The event directory SEQ names, from the daemon: <root>/atrace/<path>.
int ResolveSeq(const Globals& g, uint64_t seq, std::string* dir) {
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  atrace_status status{};
  if (auto ec = client.Status(&status)) return Fail(client, "status", ec);
  std::vector<atrace::ListEntry> entries;
  if (auto ec = client.List(&entries)) return Fail(client, "list", ec);
  for (const auto& e : entries) {
    if (e.seq == seq) {
      const std::string trace_dir = std::string(status.root) + "/atrace";
      if (const Readers readers = Readers::Of(trace_dir); !readers.Reads(e.uid)) {
        std::cerr << "atracectl: show: " << readers.BelongsTo(seq, e.uid) << "\n";
        return kExitFailed;
      }
      *dir = trace_dir + "/" + e.path;
      return kExitOk;
    }
  }
  std::cerr << "atracectl: show: no event directory has SEQ " << seq
            << " (it was aged or vacuumed, or never was; 'atracectl list' prints the ones there are)\n";
  return kExitFailed;
}

// `text` is "N_N_T" (an id, an id, a 20-digit time) after `prefix`.
bool NamedAs(std::string_view text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  auto digits = [&text](size_t min, size_t max, bool last) {
    size_t n = 0;
    while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
    if (n < min || n > max || (last ? n != text.size() : (n == text.size() || text[n] != '_'))) return false;
    text.remove_prefix(last ? n : n + 1);
    return true;
  };
  return prefix.rfind("trace_", 0) == 0 ? digits(1, 10, false) && digits(1, 10, false) && digits(20, 20, true)
                                        : digits(1, 10, false) && digits(20, 20, true);
}

// The real path of `dir` when it is an event directory as the daemon makes them, under a root
// or a bundle's copy of one: .../atrace/trace_{pgid}_{pid}_{time}/{kind}_event_{pid}_{time}.
// "" otherwise: show reads no other directory (not /etc, not a link that leads there).
std::string EventDirPath(const std::string& dir) {
  char* real = ::realpath(dir.c_str(), nullptr);
  if (!real) return "";
  const std::string path = real;
  std::free(real);
  std::vector<std::string_view> parts;
  for (std::string_view rest = path; !rest.empty();) {
    const size_t slash = rest.rfind('/');
    parts.push_back(rest.substr(slash + 1));
    if (parts.size() == 3 || slash == std::string_view::npos) break;
    rest = rest.substr(0, slash);
  }
  if (parts.size() < 3 || parts[2] != "atrace" || !NamedAs(parts[1], "trace_")) return "";
  for (const char* kind : {"schedule_event_", "stackcore_event_", "exit_event_"}) {
    if (NamedAs(parts[0], kind)) return path;
  }
  return "";
}

struct ShowOptions {
  std::string target;  // SEQ or DIR
  bool json = false;
  TextBudget budget;
};

std::optional<ShowOptions> ParseOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "one JSON object: the directory and each file's text")(
      "target", po::value<std::string>(), "SEQ (from 'atracectl list') or the path of an event directory");
  AddTextBudgetOption(options);
  po::positional_options_description positional;
  positional.add("target", 1);
  auto vm = ParseCommand(args, "Usage: atracectl [--socket PATH] show SEQ|DIR [--json] [--max-text-mib N]", options, positional,
                         exit_code);
  if (!vm) return std::nullopt;
  ShowOptions o;
  if (!ReadTextBudget(*vm, &o.budget, exit_code)) return std::nullopt;
  if (!vm->count("target")) {
    *exit_code = UsageError("show: give a SEQ from 'atracectl list' or an event directory");
    return std::nullopt;
  }
  o.target = (*vm)["target"].as<std::string>();
  o.json = (*vm)["json"].as<bool>();
  return o;
}

// The event directory `target` names: a path, else (when no such path exists) the SEQ the
// daemon resolves; kExitOk, or the exit code after saying why.
int FindEventDir(const Globals& g, const std::string& target, std::string* dir) {
  *dir = target;
  const bool is_seq = !target.empty() && target.size() <= 19 &&
                      std::all_of(target.begin(), target.end(), [](char c) { return c >= '0' && c <= '9'; });
  struct stat st {};
  if (is_seq && ::stat(target.c_str(), &st) != 0) {
    if (int rc = ResolveSeq(g, std::stoull(target), dir); rc != kExitOk) return rc;
  }
  if (::stat(dir->c_str(), &st) != 0) {
    std::cerr << "atracectl: show: " << TerminalLine(*dir) << ": " << std::strerror(errno) << "\n";
    return kExitFailed;
  }
  if (!S_ISDIR(st.st_mode)) {
    std::cerr << "atracectl: show: " << TerminalLine(*dir) << " is not a directory (give an event directory or its SEQ)\n";
    return kExitUsage;
  }
  if (EventDirPath(*dir).empty()) {
    std::cerr << "atracectl: show: " << TerminalLine(*dir)
              << " is not an event directory (<root>/atrace/trace_*/KIND_event_*, as 'atracectl list' prints them, "
                 "or in a bundle's atrace/); give one, or its SEQ\n";
    return kExitUsage;
  }
  return kExitOk;
}

// One file's entry: a member of the JSON array (after the first: a comma), or a header and
// its text.
void PrintFile(const std::string& dir, const std::string& name, const Shown& s, bool json, bool first) {
  if (json) {
    std::cout << (first ? "" : ",") << "{\"name\":" << JsonString(name) << ",\"decoded_as\":" << JsonString(s.how);
    if (s.error.empty()) {
      std::cout << ",\"text\":";
      WriteJsonString(std::cout, s.text);
      if (s.cut) std::cout << ",\"cut\":true";
      std::cout << "}";
    } else {
      std::cout << ",\"error\":" << JsonString(s.error) << "}";
    }
    return;
  }
  std::cout << "==> " << TerminalLine(dir + "/" + name) << " <==\n";
  if (!s.error.empty()) {
    std::cout << "(" << TerminalLine(s.error) << ")\n";
    return;
  }
  if (s.escaped) {
    std::cout << s.text;
  } else {
    WriteTerminalText(std::cout, s.text);
  }
  if (!s.text.empty() && s.text.back() != '\n') std::cout << "\n";
}

// Every file of `dir` shown in turn until the budget is spent; false when one could not be.
// Each file is read, written and let go before the next: what is held is one file's text,
// and the sum over the files is bounded by the budget.
bool PrintFiles(const std::string& dir, const std::vector<std::string>& names, bool json, TextBudget& budget) {
  bool failed = false;
  for (size_t index = 0; index < names.size() && !budget.reached; ++index) {
    if (budget.left() == 0) {
      budget.reached = true;
      break;
    }
    const Shown s = Show(dir, names[index], budget);
    failed = failed || !s.error.empty();
    PrintFile(dir, names[index], s, json, index == 0);
  }
  return !failed;
}

}  // namespace

int RunShow(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  std::optional<ShowOptions> o = ParseOptions(args, &exit_code);
  if (!o) return exit_code;
  std::string dir;
  if (int found = FindEventDir(g, o->target, &dir); found != kExitOk) return found;
  int list_err = 0;
  const std::vector<std::string> names = SortedNames(dir, &list_err);
  if (list_err != 0) {
    std::cerr << "atracectl: show: " << TerminalLine(dir) << ": " << std::strerror(list_err) << "\n";
    return kExitFailed;
  }
  if (o->json) std::cout << "{\"dir\":" << JsonString(dir) << ",\"files\":[";
  const bool failed = !PrintFiles(dir, names, o->json, o->budget);
  const std::string stopped =
      o->budget.reached ? o->budget.Message(names.size(), "show fewer files (atracectl export selects them)") : "";
  if (o->json) {
    std::cout << "]";
    if (!stopped.empty()) std::cout << ",\"stopped\":" << JsonString(stopped);
    std::cout << "}\n";
  } else if (!stopped.empty()) {
    std::cout << "(" << stopped << ")\n";
  }
  if (!stopped.empty()) std::cerr << "atracectl: show: " << stopped << "\n";
  if (failed) std::cerr << "atracectl: show: some files of " << TerminalLine(dir) << " could not be shown (said where)\n";
  return failed || !stopped.empty() ? kExitFailed : kExitOk;
}

}  // namespace atracectl
