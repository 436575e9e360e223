// atracectl merge and hang over bundles of several hosts: synthetic bundles (fleet_bundles.h)
// with the stack reports a dump writes, and hostile ones.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "fleet_bundles.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace atraced::testing;
using namespace fleet_test;

namespace {

RunResult Ctl(std::vector<std::string> args) {
  args.insert(args.begin(), ATRACECTL_BINARY);
  return Run(args);
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Three hosts, two ranks each; ranks 0-4 blocked in one function and 5 in another; each
// process of `uid` when given (bundle.jsonl's "uid"), and the processes `extra` on n1 too.
std::vector<std::string> HungJob(const TempDir& tmp, int world_size, bool h2_synchronized = true,
                                 const std::vector<RankProcess>& extra = {}, std::optional<uint32_t> uid = std::nullopt) {
  std::vector<std::string> bundles;
  const char* hosts[] = {"n0", "n1", "n2"};
  for (int h = 0; h < 3; ++h) {
    BundleSpec spec{hosts[h], {}, h != 2 || h2_synchronized, ""};
    for (int k = 0; k < 2; ++k) {
      const int rank = h * 2 + k;
      spec.ranks.push_back({rank, 1000 + rank, rank == 5 ? "load_next_batch" : "wait_allreduce_done", world_size});
      spec.ranks.back().uid = uid;
    }
    if (h == 1) spec.ranks.insert(spec.ranks.end(), extra.begin(), extra.end());
    bundles.push_back(MakeBundle(tmp / hosts[h], spec));
  }
  return bundles;
}

// `merge --format chrome-json` of the one bundle `spec` makes under `tmp`: the document, and
// standard error in *err.
std::string MergedChromeJson(const TempDir& tmp, const BundleSpec& spec, std::string* err) {
  const std::string bundle = MakeBundle(tmp / "n0", spec);
  auto merged = Ctl({"merge", bundle, "--format", "chrome-json", "-o", tmp / "m.json"});
  *err = merged.err;
  INFO(merged.err);
  REQUIRE(merged.exit_code == 0);
  return ReadFile(tmp / "m.json");
}

}  // namespace

TEST_CASE("hang: ranks 0-4 in one function and 5 in another make classes {5} and {0-4}, rank 5 the culprit",
          "[atracectl][hang]") {
  TempDir tmp;
  const auto b = HungJob(tmp, 6);
  auto text = Ctl({"hang", b[0], b[1], b[2]});
  REQUIRE(text.exit_code == 0);
  INFO(text.out);
  CHECK(Has(text.out, "Ranks seen: 0-5 of 6 (world size)\n"));
  // Ranks without libatrace_hccl: the collectives say so in one line, before the stacks.
  CHECK(text.out.rfind("Collectives: no rank has a collective ledger", 0) == 0);
  CHECK_FALSE(Has(text.out, "Missing ranks"));
  CHECK(Has(text.out, "  S1 ranks 5 (1): __futex_abstimed_wait < load_next_batch < main\n"
                      "  S2 ranks 0-4 (5): __futex_abstimed_wait < wait_allreduce_done < main\n"));
  CHECK(Has(text.out, "Likely culprits: ranks 5:"));
  // The line an operator acts on: where rank 5 parts from the others, and what to run next.
  CHECK(Has(text.out, "Culprit: job J1, rank 5, host n2, pid 1005: parts from ranks 0-4 at load_next_batch (train.c:10)\n"
                      "  next: ssh n2 atracectl info 1005\n"));
  CHECK(Has(text.out, "[0-5] main\n  [0-4] wait_allreduce_done\n    [0-4] __futex_abstimed_wait\n  [5] load_next_batch\n"));
  CHECK(Has(text.out, "[0-5] poll\n"));  // every thread, not only the main one
  CHECK(Has(text.out, "  rank 5 (n2, pid 1005)\n    CANN_API  2026-12-06 06:09:11.050000 UTC  record 1 of rank 5\n"));
  // Who stopped recording first, per host by its own clock: never across hosts.
  CHECK(Has(text.out, "First to stop recording, per host (each host's own clock; hosts are not compared):\n"
                      "  n0: ranks 0\n  n1: ranks 2\n  n2: ranks 4\n"));
  CHECK_FALSE(Has(text.out, "Oldest"));
  auto json = Ctl({"hang", "--json", b[0], b[1], b[2]});
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "{\"ranks_expected\":\"0-5\",\"world_size\":6,\"world_size_claims\":{\"6\":6},\"job_uid\":null,"
                      "\"ranks_seen\":[0,1,2,3,4,5],\"missing\":\"\",\"missing_count\":0,\"aged\":[],\"conflicts\":[],\"classes\":[{\"ranks\":[5],\"ranges\":\"5\",\"count\":1,\"stack\":[\"__futex_abstimed_wait\","
                      "\"load_next_batch\",\"main\"]},{\"ranks\":[0,1,2,3,4],\"ranges\":\"0-4\",\"count\":5,"));
  CHECK(Has(json.out, "\"outliers\":[5],"));
  CHECK(Has(json.out, "\"culprits\":[{\"job\":\"J1\",\"rank\":5,\"host\":\"n2\",\"pid\":1005,\"function\":"
                      "\"load_next_batch\",\"source\":\"train.c:10\",\"parts_from\":\"0-4\",\"next\":\"ssh n2 atracectl "
                      "info 1005\"}],\"first_stopped_per_host\":{\"n0\":[0],\"n1\":[2],\"n2\":[4]},"));
  CHECK(Has(json.out, "\"last_records\":{\"0\":{\"host\":\"n0\",\"pid\":1000,\"tracers\":{\"CANN_API\":{\"ts_us\":"));
}

TEST_CASE("hang: a rank the world size expects and no bundle holds is named missing, and the report says it cannot "
          "decide where dumps are missing",
          "[atracectl][hang]") {
  TempDir tmp;
  const auto b = HungJob(tmp, 7);
  auto text = Ctl({"hang", b[0], b[1], b[2]});
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Ranks seen: 0-5 of 7 (world size)\nMissing ranks: 6: expected by the world size, in no bundle."));
  CHECK(Has(text.out, "This report cannot decide where dumps are missing"));
  auto json = Ctl({"hang", "--json", b[0], b[1], b[2]});
  CHECK(Has(json.out, "\"ranks_expected\":\"0-6\",\"world_size\":7,"));
  CHECK(Has(json.out, "\"ranks_seen\":[0,1,2,3,4,5],\"missing\":\"6\",\"missing_count\":1,"));
  // Without rank 5's bundle's host: ranks 4 and 5 are missing too, and rank 5's stack is gone.
  auto two = Ctl({"hang", "--json", b[0], b[1]});
  CHECK(Has(two.out, "\"missing\":\"4-6\",\"missing_count\":3,"));
  CHECK(Has(two.out, "\"outliers\":[],"));
}

namespace {

// Bundle n0 of a job of world size 4: ranks 0 and 2 dumped; bundle.jsonl's lines `aged`.
std::string AgedJobBundle(const TempDir& tmp, const std::string& aged) {
  BundleSpec spec{"n0", {}, true, aged};
  spec.ranks.push_back({0, 1000, "wait_allreduce_done", 4});
  spec.ranks.push_back({2, 1002, "load_next_batch", 4});
  return MakeBundle(tmp / "n0", spec);
}

std::string AgedLine(const std::string& job, const std::string& rank, const std::string& reason,
                     const std::string& more = "") {
  return "{\"record\":\"aged\",\"dir\":\"trace_1_1_20261207035000000000/schedule_event_1_20261207035000000001\","
         "\"job\":\"" + job + "\",\"rank\":" + rank + ",\"world_size\":4,\"uid\":1000,\"reason\":\"" + reason +
         "\",\"at\":1765079400000000,\"exported\":false,\"by\":\"hang\"" + more + "}\n";
}

}  // namespace

TEST_CASE("hang: a rank whose dump the daemon aged before the export is named aged with why and when, not missing",
          "[atracectl][hang][aged]") {
  TempDir tmp;
  const std::string b = AgedJobBundle(tmp, AgedLine("J1", "1", "bytes") + AgedLine("J2", "3", "count"));
  auto text = Ctl({"hang", b});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Ranks seen: 0,2 of 4 (world size)\n"
                      "Aged ranks: 1 on n0: their dumps were removed by the byte budget (max-use) at "
                      "2025-12-07 03:50:00.000000 UTC, before export. Raise max-use in atraced.conf, or export sooner "
                      "after a dump.\n"
                      "Missing ranks: 3: expected by the world size, in no bundle."));  // J2's aged rank 3 is not J1's
  auto json = Ctl({"hang", "--json", b});
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"missing\":\"3\",\"missing_count\":1,\"aged\":[{\"rank\":1,\"host\":\"n0\",\"reason\":"
                      "\"bytes\",\"at_us\":1765079400000000,\"at\":\"2025-12-07 03:50:00.000000 UTC\",\"exported\":false,"
                      "\"uid\":1000,\"dir\":\"trace_1_1_20261207035000000000/schedule_event_1_20261207035000000001\"}],"));
  // Each reason says what to change.
  for (const auto& [reason, words] : std::vector<std::pair<std::string, std::string>>{
           {"keep-free", "by the keep-free guard (its file system was nearly full) at"},
           {"count", "by record-num after dump-keep ran out at"},
           {"age", "by max-age at"},
           {"vacuum", "by a vacuum at"}}) {
    TempDir each;
    auto r = Ctl({"hang", AgedJobBundle(each, AgedLine("J1", "1", reason))});
    INFO(reason << ": " << r.out);
    CHECK(Has(r.out, "Aged ranks: 1 on n0: their dumps were removed " + words));
  }
}

TEST_CASE("hang: an edited aged line is checked: hostile text escaped, a bad field or a rank that is seen never "
          "hides a missing one",
          "[atracectl][hang][aged][security]") {
  TempDir tmp;
  std::string lines;
  lines += AgedLine("J1", "0", "bytes");                 // rank 0 is in the bundle: it stays seen
  lines += AgedLine("J1", "3", "disk full");             // no reason of the daemon's: not a line
  lines += AgedLine("J1\\u001b]52;c;cm0K\\u0007", "3", "bytes");  // not a job label
  lines += AgedLine("J1", "-3", "bytes");                // not a rank
  lines += AgedLine("J1", "\"3\"", "bytes");             // a string, not a number
  lines += AgedLine("J1", "9", "bytes");                 // past the world size
  lines += "{\"record\":\"aged\",\"job\":\"J1\",\"rank\":3,\"reason\":\"bytes\"}\n";  // no time
  // Its directory is shown only in --json, escaped there; a terminal escape in it never
  // reaches the text.
  lines += "{\"record\":\"aged\",\"dir\":\"\\u001b[2J\\u001b]0;pwn\\u0007\",\"job\":\"J1\",\"rank\":1,\"reason\":\"keep-free\","
           "\"at\":1765079400000000}\n";
  const std::string b = AgedJobBundle(tmp, lines);
  auto text = Ctl({"hang", b});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Aged ranks: 1 on n0: their dumps were removed by the keep-free guard"));
  CHECK(Has(text.out, "Missing ranks: 3: expected by the world size"));
  CHECK(Count(text.out, "Aged ranks") == 1);
  CHECK_FALSE(Has(text.out, "\x1b"));
  CHECK_FALSE(Has(text.out, "pwn"));
  auto json = Ctl({"hang", "--json", b});
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"dir\":\"\\u001b[2J\\u001b]0;pwn\\u0007\""));
  CHECK_FALSE(Has(json.out, "\x1b"));

  // Bounded: more aged lines than one bundle may hold are counted, not read.
  TempDir many;
  std::string flood;
  for (int i = 0; i < 4100; ++i) flood += AgedLine("J1", "1", "bytes");
  auto bounded = Ctl({"hang", AgedJobBundle(many, flood)});
  INFO(bounded.err);
  REQUIRE(bounded.exit_code == 0);
  CHECK(Has(bounded.err, ": 4 aged dump line(s) past the bound of 4096 were not read\n"));
  CHECK(Count(bounded.out, "Aged ranks") == 1);
}

TEST_CASE("hang: bundles with no labelled process, or no rank with stacks, are an error with a hint, never an "
          "empty report",
          "[atracectl][hang]") {
  TempDir tmp;
  // An export made before any dump: no directory at all.
  const std::string empty = MakeBundle(tmp / "empty", {"n0", {}, true, ""});
  auto none = Ctl({"hang", empty});
  CHECK(none.exit_code == 1);
  CHECK(none.out.empty());
  CHECK(Has(none.err, "atracectl: hang: no process in these bundles has a rank label (0 without one): label the job's "
                      "processes"));
  // Ranks whose directories hold their rings only: nobody ran dump before export.
  RankProcess undumped{0, 1000, "f"};
  undumped.stacks = false;
  RankProcess other{1, 1001, "f"};
  other.stacks = false;
  const std::string rings_only = MakeBundle(tmp / "rings", {"n0", {undumped, other}, true, ""});
  for (const char* form : {"", "--json"}) {
    std::vector<std::string> args{"hang", rings_only};
    if (*form) args.push_back(form);
    auto r = Ctl(args);
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(Has(r.err, "atracectl: hang: none of the 2 ranks has stacks in these bundles: run 'atracectl dump --job J' on "
                     "each host before 'atracectl export'"));
  }
  // One rank with stacks is enough for a report (the other is named without stacks).
  RankProcess dumped{1, 1001, "f"};
  auto some = Ctl({"hang", MakeBundle(tmp / "some", {"n0", {undumped, dumped}, true, ""})});
  CHECK(some.exit_code == 0);
  CHECK(Has(some.out, "Ranks without stacks: 0 "));
}

TEST_CASE("merge chrome-json: a group per rank in rank order, labelled, records kept twice drawn once, an "
          "unsynchronized clock flagged",
          "[atracectl][merge]") {
  TempDir tmp;
  // n2 first on the command line, its clock unsynchronized; rank 3 dumped twice (its ring in both).
  std::vector<std::string> bundles;
  bundles.push_back(MakeBundle(tmp / "n2", {"n2", {{5, 1005, "f"}, {4, 1004, "f"}}, false, ""}));
  bundles.push_back(MakeBundle(tmp / "n1", {"n1", {{3, 1003, "f", 6, "J1", "train", 2}, {2, 1002, "f"}}, true, ""}));
  bundles.push_back(MakeBundle(tmp / "n0", {"n0", {{1, 1001, "f"}, {0, 1000, "f"}}, true, ""}));
  const std::string out = tmp / "job.json";
  auto merged = Ctl({"merge", bundles[0], bundles[1], bundles[2], "--format", "chrome-json", "-o", out});
  INFO(merged.err);
  REQUIRE(merged.exit_code == 0);
  const std::string doc = ReadFile(out);
  for (int rank = 0; rank < 6; ++rank) {
    const std::string host = "n" + std::to_string(rank / 2);
    CHECK(Has(doc, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank + 1) +
                       ",\"tid\":0,\"args\":{\"name\":\"rank " + std::to_string(rank) + " \u00b7 " + host + " \u00b7 pid " +
                       std::to_string(1000 + rank) + " \u00b7 train\"}}"));
  }
  // Rank 3's ring: records 0 and 1, then 0, 1 and 2 in the later dump: three drawn.
  CHECK(Count(doc, "of rank 3\"}}") == 3);
  CHECK(Count(doc, "of rank 2\"}}") == 2);
  CHECK(Has(merged.err, "1 record kept in more than one directory of a process, drawn once") == false);
  CHECK(Has(merged.err, "2 records kept in more than one directory of a process, drawn once"));
  CHECK(Has(doc, "\"name\":\"clock not synchronized\""));
  CHECK(Count(doc, "\"name\":\"clock not synchronized\"") == 2);  // n2's two ranks
  CHECK(Has(doc, "{\"path\":\"" + bundles[0] + "\",\"host\":\"n2\",\"clock_synchronized\":false}"));
  CHECK(Has(merged.err, "the clock of n2 was not synchronized at export (adjtimex: TIME_ERROR)"));
  // A document Chrome's and Perfetto's loaders take: JSON (python3 checks it where present).
  if (Run({"sh", "-c", "command -v python3"}).exit_code == 0) {
    CHECK(Run({"python3", "-c", "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['traceEvents']) > 30", out})
              .exit_code == 0);
  }
}

TEST_CASE("merge html: one page with every rank's group", "[atracectl][merge]") {
  TempDir tmp;
  const auto b = HungJob(tmp, 6);
  const std::string out = tmp / "job.html";
  auto merged = Ctl({"merge", b[0], b[1], b[2], "--format", "html", "-o", out});
  REQUIRE(merged.exit_code == 0);
  const std::string page = ReadFile(out);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  for (int rank = 0; rank < 6; ++rank) CHECK(Has(page, "rank " + std::to_string(rank) + " "));
  CHECK(Has(page, "record 1 of rank 5"));
  if (::access("/usr/bin/chromium", X_OK) != 0) {
    WARN("no /usr/bin/chromium: the page was checked, not rendered");
    return;
  }
  // Drawn by headless Chromium: a page beside it loads it in a frame and writes the state the
  // page keeps on its <body> (its groups and their labels, top to bottom) into its own DOM.
  WriteFile(tmp / "drive.html", R"html(<!DOCTYPE html><html><body><pre id="result">not run</pre>
<iframe id="f" src="job.html" width="1200" height="700"></iframe>
<script>
document.getElementById('f').onload = function () {
  var b = this.contentWindow.document.body.dataset;
  document.getElementById('result').textContent = JSON.stringify({groups: +b.groups, labels: b.labels});
};
</script></body></html>)html");
  const RunResult dom = Run({"/usr/bin/timeout", "90", "/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                             "--no-first-run", "--disable-background-networking", "--allow-file-access-from-files",
                             "--user-data-dir=" + (tmp / "profile"), "--dump-dom", "file://" + (tmp / "drive.html")});
  INFO(dom.err.substr(0, 2000));
  REQUIRE(dom.exit_code == 0);
  std::smatch m;
  const std::string result =
      std::regex_search(dom.out, m, std::regex("<pre id=\"result\">([^<]*)</pre>")) ? m[1].str() : "";
  INFO(result);
  CHECK(Has(result, "\"groups\":6,"));
  // One group per rank, in rank order, each labelled rank, host, pid and program.
  size_t at = 0;
  for (int rank = 0; rank < 6; ++rank) {
    const size_t found = result.find("rank " + std::to_string(rank) + " \xc2\xb7 n" + std::to_string(rank / 2), at);
    INFO("rank " << rank);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found;
  }
}

TEST_CASE("merge and hang: usage errors", "[atracectl][merge][hang]") {
  CHECK(Ctl({"merge", "--format", "chrome-json", "-o", "/tmp/x"}).exit_code == 2);
  CHECK(Ctl({"merge", "a.tar.gz", "-o", "/tmp/x"}).exit_code == 2);
  CHECK(Ctl({"merge", "a.tar.gz", "--format", "svg", "-o", "/tmp/x"}).exit_code == 2);
  CHECK(Ctl({"hang"}).exit_code == 2);
  auto none = Ctl({"hang", "/nonexistent/bundle.tar.gz"});
  CHECK(none.exit_code == 1);
  CHECK(Has(none.err, "/nonexistent/bundle.tar.gz: No such file or directory"));
}

TEST_CASE("hostile bundles: a truncated gzip is an error naming the bundle, what came before it is kept",
          "[atracectl][merge][hang][security]") {
  TempDir tmp;
  const auto b = HungJob(tmp, 6);
  const std::string whole = ReadFile(b[2]);
  const std::string cut = tmp / "cut.tar.gz";
  WriteFile(cut, whole.substr(0, whole.size() / 2));
  auto hang = Ctl({"hang", b[0], b[1], cut});
  CHECK(hang.exit_code == 1);
  CHECK(Has(hang.err, cut + ": "));
  CHECK(Has(hang.err, "truncated"));
  CHECK(!Has(hang.err, "gzip: "));  // gzip's own message is not passed on raw
  CHECK(Has(hang.out, "Ranks seen: 0-"));  // the others' ranks are reported
  auto merge = Ctl({"merge", b[0], cut, "--format", "chrome-json", "-o", tmp / "m.json"});
  CHECK(merge.exit_code == 1);
  CHECK(Has(merge.err, "truncated"));
  // Not a gzip at all.
  WriteFile(tmp / "text.tar.gz", "hello\n");
  auto text = Ctl({"hang", tmp / "text.tar.gz"});
  CHECK(text.exit_code == 1);
  // A file that is no gzip (/etc/passwd) is said to be none: not gzip's stderr, not "truncated".
  for (const std::string& path : {tmp / "text.tar.gz", std::string("/etc/passwd")}) {
    auto not_gzip = Ctl({"hang", path});
    INFO(not_gzip.err);
    CHECK(not_gzip.exit_code == 1);
    CHECK(Has(not_gzip.err, "atracectl: hang: " + path + ": not a gzip file: a bundle is the .tar.gz that 'atracectl export --format tar' writes\n"));
    CHECK(!Has(not_gzip.err, "gzip: "));
    CHECK(!Has(not_gzip.err, "truncated"));
  }
}

TEST_CASE("hostile bundles: member names with '..' or absolute are refused, never followed", "[atracectl][hang][security]") {
  TempDir tmp;
  std::string tar = TarMember("../../etc/evil.txt", "x") + TarMember("/etc/evil2.txt", "y") +
                    TarMember("atrace/../../evil3.txt", "z") +
                    TarMember("atrace/trace_7_7_20261206060000000000/schedule_event_7_20261206061000000000/"
                              "schedule_tracer_CANN_API.txt",
                              "2026-12-06 06:09:10.000.000 fine\n");
  const std::string bundle = tmp / "evil.tar.gz";
  WriteGzipTar(bundle, tar);
  auto merged = Ctl({"merge", bundle, "--format", "chrome-json", "-o", tmp / "m.json"});
  CHECK(merged.exit_code == 0);
  CHECK(Count(merged.err, "refused: an absolute name or a '..' component") == 3);
  CHECK(Has(merged.err, "member ../../etc/evil.txt refused"));
  CHECK(Has(ReadFile(tmp / "m.json"), "\"text\":\"fine\""));
  CHECK(::access((tmp / "../etc/evil.txt").c_str(), F_OK) != 0);
}

TEST_CASE("hostile bundles: a lying .bin is skipped with its reason, the rest drawn", "[atracectl][merge][security]") {
  TempDir tmp;
  const std::string dir = "atrace/trace_7_7_20261206060000000000/schedule_event_7_20261206061000000000/";
  std::string tar = TarMember(dir + "schedule_tracer_LIE.bin", std::string(4096, '\xff')) +
                    TarMember(dir + "schedule_tracer_CANN_API.txt", "2026-12-06 06:09:10.000.000 fine\n");
  const std::string bundle = tmp / "lie.tar.gz";
  WriteGzipTar(bundle, tar);
  auto merged = Ctl({"merge", bundle, "--format", "chrome-json", "-o", tmp / "m.json"});
  CHECK(merged.exit_code == 0);
  CHECK(Has(merged.err, "skipped " + bundle + ": trace_7_7_20261206060000000000/schedule_event_7_20261206061000000000/"
                        "schedule_tracer_LIE.bin: "));
  CHECK(Has(ReadFile(tmp / "m.json"), "\"text\":\"fine\""));
  // hang reads it too, names the lying file, and says the bundle has no rank to report on.
  auto hang = Ctl({"hang", bundle});
  CHECK(hang.exit_code == 1);
  CHECK(Has(hang.err, "schedule_tracer_LIE.bin: "));
  CHECK(Has(hang.err, "atracectl: hang: no process in these bundles has a rank label (1 without one)"));
}

TEST_CASE("hostile bundles: labels, hosts and frames with terminal escapes are refused or escaped in every output",
          "[atracectl][merge][hang][security]") {
  TempDir tmp;
  BundleSpec spec{"n\\u001b]0;owned\\u0007", {{0, 1000, "f\x1b[2J"}}, true, ""};
  spec.ranks[0].job = "J\\u001b[31m";  // not a label: dropped
  const std::string bundle = MakeBundle(tmp / "esc", spec);
  auto hang = Ctl({"hang", bundle});
  REQUIRE(hang.exit_code == 0);
  CHECK_FALSE(Has(hang.out + hang.err, "\x1b"));
  CHECK_FALSE(Has(hang.out + hang.err, "\x07"));
  CHECK(Has(hang.out, "f\\x1b[2J"));
  auto json = Ctl({"hang", "--json", bundle});
  CHECK_FALSE(Has(json.out, "\x1b"));
  CHECK(Has(json.out, "\\u001b"));
  auto merged = Ctl({"merge", bundle, "--format", "chrome-json", "-o", tmp / "m.json"});
  REQUIRE(merged.exit_code == 0);
  CHECK_FALSE(Has(ReadFile(tmp / "m.json") + merged.err, "\x1b"));
  auto html = Ctl({"merge", bundle, "--format", "html", "-o", tmp / "m.html"});
  REQUIRE(html.exit_code == 0);
  CHECK_FALSE(Has(ReadFile(tmp / "m.html"), "\x1b"));
}

TEST_CASE("hostile bundles: a 1 TiB member, sparse or claimed, is a bounded error, not read", "[atracectl][hang][security]") {
  TempDir tmp;
  // Claimed: a header saying 1 TiB (GNU base-256) with nothing behind it.
  const std::string claimed = tmp / "claimed.tar.gz";
  WriteGzipTar(claimed, TarMember("atrace/trace_7_7_20261206060000000000/schedule_event_7_20261206061000000000/"
                                  "schedule_tracer_BIG.txt",
                                  "", '0', 1ull << 40));
  auto big = Ctl({"hang", claimed});
  CHECK(big.exit_code == 1);
  CHECK(Has(big.err, "holds 1099511627776 bytes, more than the 64 MiB a trace file may: not read further"));
  // Sparse: a real 1 TiB file of holes, packed by GNU tar --sparse (a few KiB of bundle).
  const std::string dir = tmp / "sparse/atrace/trace_7_7_20261206060000000000/schedule_event_7_20261206061000000000";
  REQUIRE(Run({"mkdir", "-p", dir}).exit_code == 0);
  if (Run({"truncate", "-s", "1T", dir + "/schedule_tracer_HOLES.txt"}).exit_code != 0) {
    WARN("this file system cannot hold a 1 TiB sparse file: the sparse case is not checked here");
    return;
  }
  const std::string sparse = tmp / "sparse.tar.gz";
  REQUIRE(Run({"tar", "--sparse", "-czf", sparse, "-C", tmp / "sparse", "atrace"}).exit_code == 0);
  auto holes = Ctl({"merge", sparse, "--format", "chrome-json", "-o", tmp / "m.json"});
  CHECK(holes.exit_code == 0);
  CHECK(Has(holes.err, "schedule_tracer_HOLES.txt skipped: a sparse file"));
}

namespace {

// atracectl under peak_rss (tests/support/peak_rss.c): its peak RSS in KiB, with the sanitizer's
// quarantine off (it keeps freed memory resident on purpose: what is measured is what is held).
struct Measured {
  RunResult run;
  long max_rss_kib = 0;
  size_t out_size = 0;
};
Measured CtlMeasured(const TempDir& tmp, std::vector<std::string> args) {
  std::vector<std::string> argv{PEAK_RSS_BINARY, tmp / "rss", ATRACECTL_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  Measured m;
  m.run = Run(argv, {.env = {{"ASAN_OPTIONS", "quarantine_size_mb=0:thread_local_quarantine_size_kb=0:detect_leaks=0"}},
                     .stdout_file = tmp / "out"});
  const std::string rss = ReadFile(tmp / "rss");
  INFO(m.run.err);
  REQUIRE(!rss.empty());  // peak_rss writes it once atracectl ended, whatever its status
  m.max_rss_kib = std::stol(rss);
  m.out_size = ReadFile(tmp / "out").size();
  return m;
}

// A process of uid 2000 (not the job's 1000) that says it is `rank` of `world_size` and
// waits where ranks 0-4 do.
RankProcess OtherUsers(int rank, int pid, int world_size) {
  RankProcess p{rank, pid, "wait_allreduce_done", world_size};
  p.uid = 2000;
  return p;
}

}  // namespace

TEST_CASE("hang: a rank another user's process also claims is a named conflict, never a merge, and the culprit stays",
          "[atracectl][hang][security]") {
  TempDir tmp;
  // uid 2000's process on n1 says it is rank 5 and waits where the others do.
  const auto b = HungJob(tmp, 6, true, {OtherUsers(5, 6666, 6)}, 1000);
  auto text = Ctl({"hang", b[0], b[1], b[2]});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Rank 5 is claimed by 2 processes: uid 2000, n1, pid 6666; uid 1000, n2, pid 1005. Used: uid 1000, "
                      "n2, pid 1005 (the job's uid 1000); the others are left out.\n"));
  CHECK(Has(text.out, "  S1 ranks 5 (1): __futex_abstimed_wait < load_next_batch < main\n"));
  CHECK(Has(text.out, "Likely culprits: ranks 5:"));
  CHECK(Has(text.out, "  rank 5 (n2, pid 1005)\n"));  // the last records are the used claimant's
  CHECK(!Has(text.out, "Every rank with stacks has its main thread in the same place"));
  auto json = Ctl({"hang", "--json", b[0], b[1], b[2]});
  CHECK(Has(json.out, "\"job_uid\":1000,"));
  CHECK(Has(json.out, "\"conflicts\":[{\"rank\":5,\"claimants\":[{\"uid\":2000,\"host\":\"n1\",\"pid\":6666,\"used\":false},"
                      "{\"uid\":1000,\"host\":\"n2\",\"pid\":1005,\"used\":true}]}],"));
  CHECK(Has(json.out, "\"outliers\":[5],"));
  CHECK(Has(json.out, "\"culprits\":[{\"job\":\"J1\",\"rank\":5,\"host\":\"n2\",\"pid\":1005,\"function\":"
                      "\"load_next_batch\",\"source\":\"train.c:10\",\"parts_from\":\"0-4\",\"next\":\"ssh n2 atracectl "
                      "info 1005\"}],\"first_stopped_per_host\":{\"n0\":[0],\"n1\":[2],\"n2\":[4]},"));
  // Bundles from before uid was recorded: no claimant can be chosen; the rank is left out, named.
  TempDir old;
  RankProcess unknown{5, 6666, "wait_allreduce_done", 6};
  const auto o = HungJob(old, 6, true, {unknown});  // no uids
  auto undecided = Ctl({"hang", o[0], o[1], o[2]});
  INFO(undecided.out);
  CHECK(Has(undecided.out, "Rank 5 is claimed by 2 processes: uid ?, n1, pid 6666; uid ?, n2, pid 1005. None is used"));
  CHECK(Has(undecided.out, "Ranks seen: 0-4 of 6 (world size)\n"));
  CHECK(Has(undecided.out, "Missing ranks: 5: expected by the world size"));
  CHECK(!Has(undecided.out, " ranks 0-5 ("));  // never merged into one class
}

TEST_CASE("hang: a world size of 16777216 costs nothing: missing ranks as ranges, the job's uid's world size used",
          "[atracectl][hang][security]") {
  TempDir tmp;
  // Another user's process labels rank 7 of a world of 16777216: the job's world size stays 6.
  const auto b = HungJob(tmp, 6, true, {OtherUsers(7, 7777, 16777216)}, 1000);
  auto text = CtlMeasured(tmp, {"hang", b[0], b[1], b[2]});
  const std::string out = ReadFile(tmp / "out");
  INFO(out);
  CHECK(text.run.exit_code == 0);
  CHECK(Has(out, "Ranks seen: 0-5,7 of 6 (world size)\n"));
  CHECK(!Has(out, "Missing ranks"));
  // The job's own processes saying 16777216: missing as one range, the output and memory small.
  TempDir big;
  std::vector<std::string> bundles;
  BundleSpec spec{"n0", {}, true, ""};
  for (int rank = 0; rank < 4; ++rank) spec.ranks.push_back({rank, 1000 + rank, "wait_allreduce_done", 16777216});
  bundles.push_back(MakeBundle(big / "n0", spec));
  auto json = CtlMeasured(big, {"hang", "--json", bundles[0]});
  const std::string doc = ReadFile(big / "out");
  CHECK(json.run.exit_code == 0);
  CHECK(Has(doc, "\"ranks_expected\":\"0-16777215\",\"world_size\":16777216,"));
  CHECK(Has(doc, "\"missing\":\"4-16777215\",\"missing_count\":16777212,"));
  CHECK(json.out_size < 64 * 1024);
  CHECK(json.max_rss_kib < 64 * 1024);
  auto text_big = CtlMeasured(big, {"hang", bundles[0]});
  CHECK(Has(ReadFile(big / "out"), "Missing ranks: 4-16777215: expected by the world size"));
  CHECK(text_big.out_size < 64 * 1024);
}

TEST_CASE("hang: a report shaped as a million-node tree and many large reports are held and printed within bounds",
          "[atracectl][hang][security]") {
  TempDir tmp;
  // One rank whose [stack] is 1024 threads of 128 distinct frames each (the most proto's reader
  // reads): 131072 paths (issue 49's million-node tree took 829 MiB and printed 261 MiB).
  RankProcess tree{0, 1000, "wait_allreduce_done", 2};
  std::string threads;
  for (int t = 0; t < 1024; ++t) {
    threads += "Thread " + std::to_string(t + 3) + " (" + std::to_string(5000 + t) + ", w)\n";
    for (int f = 0; f < 128; ++f) {
      threads += "#" + std::to_string(f) + " 0x1 0x0 /m f" + std::to_string(t) + "_" + std::to_string(f) + "+0x1\n";
    }
  }
  tree.extra_frames = threads;  // after the main thread's frames: threads of their own
  BundleSpec spec{"n0", {tree, {1, 1001, "wait_allreduce_done", 2}}, true, ""};
  const std::string bundle = MakeBundle(tmp / "n0", spec);
  auto text = CtlMeasured(tmp, {"hang", bundle});
  INFO(text.run.err);
  CHECK(text.run.exit_code == 0);
  const std::string out = ReadFile(tmp / "out");
  CHECK(Has(out, "call path(s) past the tree's bound (--max-tree-nodes), e.g. "));
  CHECK(Has(text.run.err, "past the tree's bound (--max-tree-nodes 20000) are counted, not drawn"));
  CHECK(Has(out, "Likely culprits") == false);  // both ranks' main threads are in one place
  CHECK(text.out_size < 16u << 20);
  CHECK(text.max_rss_kib < 128 * 1024);
  auto json = CtlMeasured(tmp, {"hang", "--json", bundle});
  CHECK(json.out_size < 16u << 20);
  CHECK(json.max_rss_kib < 128 * 1024);
  CHECK(Has(ReadFile(tmp / "out"), "\"tree_cut_paths\":"));
  // A smaller bound is taken: fewer nodes drawn.
  auto small = CtlMeasured(tmp, {"hang", "--max-tree-nodes", "100", bundle});
  CHECK(small.out_size < 64 * 1024);
  // 16 ranks, each report 512 threads of 24 frames of about 200 bytes: held within
  // --max-text-mib in all (8 here; 64 by default), the rest said to be left out.
  TempDir many;
  std::string fat;
  for (int t = 0; t < 512; ++t) {
    fat += "Thread " + std::to_string(t + 3) + " (" + std::to_string(5000 + t) + ", w)\n";
    for (int f = 0; f < 24; ++f) fat += "#" + std::to_string(f) + " 0x1 0x0 /m " + std::string(180, 'a' + f % 26) + std::to_string(t) + "+0x1\n";
  }
  BundleSpec sixteen{"n0", {}, true, ""};
  for (int rank = 0; rank < 16; ++rank) {
    RankProcess p{rank, 1000 + rank, "wait_allreduce_done", 16};
    p.extra_frames = fat;
    sixteen.ranks.push_back(p);
  }
  const std::string fat_bundle = MakeBundle(many / "n0", sixteen);
  auto held = CtlMeasured(many, {"hang", "--max-text-mib", "8", fat_bundle});
  INFO(held.run.err);
  CHECK(held.run.exit_code == 0);
  CHECK(Has(held.run.err, "past the text bound (--max-text-mib 8) were left out"));
  CHECK(held.max_rss_kib < 128 * 1024);
  CHECK(held.out_size < 16u << 20);
}

TEST_CASE("merge: a record kept in a report and in a later dump is drawn once, whatever the saves' order and clocks",
          "[atracectl][merge]") {
  // Rank 3's ring saved twice: the later save holds records 0-1 again, placed one microsecond
  // later (its clock anchor moved), and record 2. Drawn: 0, 1, 2, once each, in either order of
  // the directories in the bundle.
  for (const bool reverse : {false, true}) {
    INFO(reverse);
    TempDir tmp;
    RankProcess p{3, 1003, "wait_allreduce_done", 4};
    p.dumps = 2;
    p.later_shift_us = 1;
    BundleSpec spec{"n0", {p}, true, ""};
    spec.reverse_dirs = reverse;
    std::string err;
    const std::string doc = MergedChromeJson(tmp, spec, &err);
    for (int r = 0; r < 3; ++r) CHECK(Count(doc, "record " + std::to_string(r) + " of rank 3\"}}") == 1);
    CHECK(Has(err, "2 records kept in more than one directory of a process, drawn once"));
  }
}

TEST_CASE("merge chrome-json: tracks of large records at one time hold no text per track", "[atracectl][merge][security]") {
  // 8 tracks of 8 distinct 512 KiB records at the same microsecond: the old rule kept each
  // track's texts at its latest time (4 MiB a track, 32 MiB in all).
  TempDir tmp;
  const std::string rel = "trace_9_9_20261206060000000000/schedule_event_9_20261206061000000000";
  const std::string dir = tmp / ("b/atrace/" + rel);
  REQUIRE(Run({"mkdir", "-p", dir}).exit_code == 0);
  for (int t = 0; t < 8; ++t) {
    std::string file;
    for (int r = 0; r < 8; ++r) file += "2026-12-06 06:09:10.000.000 " + std::to_string(r) + std::string(512 * 1024, 'x') + "\n";
    WriteFile(dir + "/schedule_tracer_T" + std::to_string(t) + ".txt", file);
  }
  WriteFile(tmp / "b/bundle.jsonl", "{\"record\":\"dir\",\"path\":\"" + rel + "\",\"pid\":9,\"comm\":\"x\",\"kind\":\"schedule\","
                                    "\"side\":\"host\",\"device_id\":0,\"created_unix_us\":1,\"job\":null,\"rank\":0,\"world_size\":1}\n");
  REQUIRE(Run({"tar", "-czf", tmp / "b.tar.gz", "-C", tmp / "b", "bundle.jsonl", "atrace"}).exit_code == 0);
  auto merged = CtlMeasured(tmp, {"merge", tmp / "b.tar.gz", "--format", "chrome-json", "-o", tmp / "m.json"});
  REQUIRE(merged.run.exit_code == 0);
  CHECK(merged.max_rss_kib < 40 * 1024);  // 23 MiB measured (ASan, quarantine off; --version: 12 MiB); the old rule held 32 MiB more
}

TEST_CASE("hang: a stack report a process wrote itself is shown as unverified, never its stacks, and the culprit stays",
          "[atracectl][hang][security]") {
  // Rank 5 is stuck elsewhere (the daemon's dump says so); then it writes a stackcore-form
  // file of its own, later, saying it waits where the others do. Rank 6 has only such a file.
  TempDir tmp;
  std::vector<std::string> bundles;
  for (int h = 0; h < 3; ++h) {
    BundleSpec spec{"n" + std::to_string(h), {}, true, ""};
    for (int k = 0; k < 2; ++k) {
      const int rank = h * 2 + k;
      spec.ranks.push_back({rank, 1000 + rank, rank == 5 ? "load_next_batch" : "wait_allreduce_done", 7});
      spec.ranks.back().uid = 1000;
    }
    if (h == 2) {
      spec.ranks.back().own_stack_in = "wait_allreduce_done";
      RankProcess only_own{6, 1006, "wait_allreduce_done", 7};
      only_own.uid = 1000;
      only_own.dumps = 0;
      only_own.own_stack_in = "wait_allreduce_done";
      spec.ranks.push_back(only_own);
    }
    bundles.push_back(MakeBundle(tmp / ("n" + std::to_string(h)), spec));
  }
  auto text = Ctl({"hang", bundles[0], bundles[1], bundles[2]});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "  S1 ranks 5 (1): __futex_abstimed_wait < load_next_batch < main\n"));
  CHECK(Has(text.out, "  S2 ranks 0-4 (5): "));
  CHECK(Has(text.out, "Likely culprits: ranks 5:"));
  CHECK(Has(text.out, "Ranks without stacks: 6 "));
  CHECK(Has(text.out, "Ignored as unverified: stack reports a process wrote into its own directory"));
  CHECK(Has(text.out, "  rank 5 (uid 1000, n2, pid 1005): 1 file(s); the daemon's own dump of it is used. Its main thread, "
                      "by its word: __futex_abstimed_wait < wait_allreduce_done < main\n"));
  CHECK(Has(text.out, "  rank 6 (uid 1000, n2, pid 1006): 1 file(s); the daemon took no dump of it: rank 6 has no stacks."));
  auto json = Ctl({"hang", "--json", bundles[0], bundles[1], bundles[2]});
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"outliers\":[5],\"no_stacks\":[6],\"unverified_stacks\":[{\"rank\":5,\"uid\":1000,\"host\":\"n2\","
                      "\"pid\":1005,\"files\":1,\"used_for_rank\":true,\"main_thread\":[\"__futex_abstimed_wait\","
                      "\"wait_allreduce_done\",\"main\"]},{\"rank\":6,"));
}

TEST_CASE("merge: a record is drawn once by its position in its ring, a torn one and the saves' order notwithstanding, "
          "and two processes' same records are both kept",
          "[atracectl][merge]") {
  // Rank 3's ring saved three times (records 0-1, 0-2 without the torn 1, 0-3), each save
  // with its positions; placed by text and order, the second save matched neither neighbour.
  for (const bool reverse : {false, true}) {
    INFO(reverse);
    TempDir tmp;
    RankProcess p{3, 1003, "wait_allreduce_done", 4};
    p.dumps = 3;
    p.positions = true;
    p.torn = 1;
    BundleSpec spec{"n0", {p}, true, ""};
    spec.reverse_dirs = reverse;
    std::string err;
    const std::string doc = MergedChromeJson(tmp, spec, &err);
    for (int r = 0; r < 4; ++r) CHECK(Count(doc, "record " + std::to_string(r) + " of rank 3\"}}") == 1);
    CHECK(Has(err, "4 records kept in more than one directory of a process, drawn once"));
  }
  // Two processes whose rings hold the same text at the same times, in the same positions of
  // a ring of the same identity: different processes, so every record of each is drawn.
  TempDir tmp;
  RankProcess a{0, 1000, "wait_allreduce_done", 2}, b{1, 1001, "wait_allreduce_done", 2};
  for (RankProcess* p : {&a, &b}) {
    p->dumps = 2;
    p->positions = true;
    p->text_tag = "the job";
  }
  std::string err;
  const std::string doc = MergedChromeJson(tmp, {"n0", {a, b}, true, ""}, &err);
  CHECK(Has(err, "4 records kept in more than one directory of a process, drawn once"));  // each process's own two
  for (int r = 0; r < 3; ++r) CHECK(Count(doc, "record " + std::to_string(r) + " of the job\"}}") == 2);
}
