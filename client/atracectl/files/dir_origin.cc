#include "files/dir_origin.h"

#include <string.h>

#include <algorithm>
#include <charconv>

#include "files/dir_files.h"

namespace atracectl {
namespace {

constexpr size_t kReportHead = 4096;
constexpr size_t kMaxReportFile = 64u << 20;

// The value of the header line "key: value" of a report, or "" (the header ends at the first
// empty line or section).
std::string_view Fact(std::string_view report, std::string_view key) {
  while (!report.empty()) {
    const size_t end = report.find('\n');
    const std::string_view line = report.substr(0, end);
    if (line.empty() || line[0] == '[') break;
    if (line.size() > key.size() + 2 && line.substr(0, key.size()) == key && line.substr(key.size(), 2) == ": ") {
      return line.substr(key.size() + 2);
    }
    if (end == std::string_view::npos) break;
    report.remove_prefix(end + 1);
  }
  return {};
}

// The word after `prefix` in `text` (up to a space or comma), or "".
std::string WordAfter(std::string_view text, std::string_view prefix) {
  const size_t at = text.find(prefix);
  if (at == std::string_view::npos) return "";
  const std::string_view rest = text.substr(at + prefix.size());
  return std::string(rest.substr(0, std::min(rest.find_first_of(" ,;()"), size_t{32})));
}

// A report's signal, "11 (SIGSEGV)" as the daemon writes it, or "SIGSEGV" or "11": its
// number (0 unknown) and its name as coredumpctl shows it ("SIGSEGV"; the word itself when it
// is no signal's).
void ReadSignal(std::string_view text, DirOrigin* o) {
  const std::string word = WordAfter(text, "");
  int signo = 0;
  auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), signo);
  if (ec == std::errc() && p == word.data() + word.size() && signo > 0 && signo < 65) {
    o->signo = signo;
    const std::string named = WordAfter(text, "(");
    const char* abbrev = ::sigabbrev_np(signo);
    o->detail = named.rfind("SIG", 0) == 0 ? named : abbrev ? "SIG" + std::string(abbrev) : word;
    return;
  }
  o->detail = word;
  for (int s = 1; s < 65 && !word.empty(); ++s) {
    const char* abbrev = ::sigabbrev_np(s);
    if (abbrev && word == "SIG" + std::string(abbrev)) o->signo = s;
  }
}

}  // namespace

std::string DirOrigin::Label() const {
  switch (origin) {
    case Origin::kReport: return "report";
    case Origin::kExit: return "exit";
    case Origin::kCrash: return detail.empty() ? "crash" : "crash " + detail;
    case Origin::kKilled: return detail.empty() ? "killed" : "killed " + detail;
    case Origin::kOom: return "oom";
    case Origin::kExited: return detail.empty() ? "exited" : "exited " + detail;
    case Origin::kDied: return "died";
    case Origin::kDump: return "dump";
    case Origin::kHang: return "hang";
    case Origin::kStackcore: break;
  }
  return "stackcore";
}

DirOrigin ReportOrigin(std::string_view report) {
  DirOrigin o;
  const std::string_view first = report.substr(0, report.find('\n'));
  if (first.find(") caught a fatal signal") != std::string_view::npos) {
    o.origin = Origin::kCrash;
    ReadSignal(Fact(report, "signal"), &o);
  } else if (first.find(") asked for its stacks") != std::string_view::npos) {
    o.origin = Origin::kDump;
  } else if (first.find(") dumped from outside") != std::string_view::npos) {
    // PROCESS_DUMP's report: its second line says who asked, an operator or the hang watch.
    o.origin = Fact(report, "dumped by").rfind("atraced's hang watch", 0) == 0 ? Origin::kHang : Origin::kDump;
  } else if (first.find(") ended without GOODBYE") != std::string_view::npos) {
    const std::string_view how = Fact(report, "how");
    if (Fact(report, "oom").rfind("killed by the OOM killer", 0) == 0) {
      o.origin = Origin::kOom;
    } else if (how.rfind("killed by signal ", 0) == 0) {
      o.origin = Origin::kKilled;
      ReadSignal(how.substr(17), &o);
    } else if (how.rfind("exited with status ", 0) == 0) {
      o.origin = Origin::kExited;
      o.detail = WordAfter(how, "exited with status ");
    } else {
      o.origin = Origin::kDied;
    }
  }
  return o;
}

DirOrigin OriginOf(const atrace::ListEntry& entry, const std::string& dir) {
  if (entry.kind == ATRACE_EVENT_SCHEDULE) {
    // A live process's dump (PROCESS_DUMP) says whose it is: an operator's, or the hang watch's.
    if (entry.flags & ATRACE_LIST_HANG) return {Origin::kHang, ""};
    if (entry.flags & ATRACE_LIST_DUMP) return {Origin::kDump, ""};
    return {Origin::kReport, ""};
  }
  if (entry.kind == ATRACE_EVENT_EXIT) return {Origin::kExit, ""};
  for (const std::string& name : SortedNames(dir)) {
    if (name.rfind("stackcore_tracer_", 0) != 0 || name.size() < 4 || name.compare(name.size() - 4, 4, ".txt") != 0) {
      continue;
    }
    std::string head;
    bool more = false;
    if (!ReadUpTo(dir + "/" + name, kMaxReportFile, kReportHead, &head, &more).ok()) continue;
    const DirOrigin o = ReportOrigin(head);
    if (o.origin != Origin::kStackcore) return o;
  }
  return {};
}

}  // namespace atracectl
