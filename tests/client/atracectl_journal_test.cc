// hang --journal: the report of a hung job from atraced's hang entries, read from a journal
// directory that systemd-journal-remote itself wrote (journal_entries.h), and the pieces it
// is made of (the entry's checks, the --exec substitution).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/shell_words.h"
#include "journal/exec_job.h"
#include "journal/hang_entry.h"
#include "journal_entries.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace atraced::testing;
using namespace journal_test;
namespace j = atracectl::journal;

namespace {

RunResult Ctl(std::vector<std::string> args) {
  args.insert(args.begin(), ATRACECTL_BINARY);
  return Run(args);
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Eight ranks on three hosts (rank r on host n{r % 3}, pid 1000 + r); rank 5 waits elsewhere.
std::vector<Fields> HungJob(const std::string& job = "J1", int world = 8) {
  std::vector<Fields> entries;
  const char* hosts[] = {"n0", "n1", "n2"};
  for (int r = 0; r < 8; ++r) entries.push_back(AtracedHang(hosts[r % 3], job, r, world, 1000 + r, JobFrames(r == 5)));
  return entries;
}

#define REQUIRE_JOURNAL_REMOTE()                   \
  do {                                             \
    if (const auto why = MissingJournalRemote(); !why.empty()) { \
      WARN("skipped: " << why);                    \
      return;                                      \
    }                                              \
  } while (0)

std::vector<j::JournalField> View(const Fields& f) {
  std::vector<j::JournalField> out;
  for (const auto& [name, value] : f) out.push_back({name, value});
  return out;
}

// `entry` parsed with `field`'s value replaced.
j::ParsedEntry ParsedWith(const Fields& entry, const std::string& field, const std::string& value) {
  Fields f = entry;
  for (auto& [name, v] : f) {
    if (name == field) v = value;
  }
  return j::ParseHangEntry(View(f), 5);
}

}  // namespace

TEST_CASE("hang --journal: eight ranks on three hosts, rank 5 stuck elsewhere, named with host, pid and file:line",
          "[atracectl][hang][journal]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::string why;
  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", HungJob(), &why));
  INFO(why);
  const auto text = Ctl({"hang", "--journal", tmp.path()});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Job J1: hang entries of 8 process(es) on 3 host(s), from the journal\n"));
  CHECK(Has(text.out, "Ranks seen: 0-7 of 8 (world size)\n"));
  CHECK_FALSE(Has(text.out, "Missing ranks"));
  CHECK(Has(text.out, "  S1 ranks 5 (1): __futex_abstimed_wait < load_next_batch < main\n"
                      "  S2 ranks 0-4,6-7 (7): __futex_abstimed_wait < wait_allreduce_done < main\n"));
  CHECK(Has(text.out, "Culprit: job J1, rank 5, host n2, pid 1005 (blocked 30 s): parts from ranks 0-4,6-7 at "
                      "load_next_batch (loader.c:88)\n  next: ssh n2 atracectl info 1005\n"));
  CHECK(Has(text.out, "  rank 3 (n0, pid 1003, blocked 30 s)\n    schedule  step 41 of rank 3\n"));

  const auto json = Ctl({"hang", "--journal", tmp.path(), "--job", "J1", "--json"});
  REQUIRE(json.exit_code == 0);
  INFO(json.out);
  CHECK(Has(json.out, "{\"job\":\"J1\",\"ranks_expected\":\"0-7\",\"world_size\":8,"));
  CHECK(Has(json.out, "\"culprits\":[{\"job\":\"J1\",\"rank\":5,\"host\":\"n2\",\"pid\":1005,"
                      "\"function\":\"load_next_batch\",\"source\":\"loader.c:88\",\"parts_from\":\"0-4,6-7\","
                      "\"state\":\"blocked\",\"stall_s\":30,\"dump\":\"trace_1005_1005/hang\",\"next\":\"ssh n2 atracectl info 1005\"}]"));
  CHECK(Has(json.out, "\"hosts\":[\"n0\",\"n1\",\"n2\"]"));
  CHECK(Has(json.out, "\"forged_entries\":0"));
}

TEST_CASE("hang --journal: entries not written by atraced are ignored, counted and never shown",
          "[atracectl][hang][journal][security]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::vector<Fields> entries = HungJob();
  // A user's process on n1 claims rank 2 stuck somewhere else, with an escape sequence; and a
  // root process that is not atraced writes the same.
  Fields forged = AtracedHang("n1", "J1", 2, 8, 4242, {"#0 0x1 0x0 /tmp/evil \x1b]52;c;cm0gLXJmIC8K\x07pwn+0x1 at evil.c:1"});
  for (auto& [name, value] : forged) {
    if (name == "_UID") value = "1000";
  }
  entries.push_back(forged);
  Fields root_not_atraced = AtracedHang("n1", "J1", 6, 8, 4343, {"#0 0x1 0x0 /tmp/evil pwn+0x1 at evil.c:1"});
  for (auto& [name, value] : root_not_atraced) {
    if (name == "_COMM") value = "python3";
    if (name == "_SYSTEMD_UNIT") value = "session-1.scope";
  }
  entries.push_back(root_not_atraced);
  std::string why;
  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", entries, &why));
  const auto text = Ctl({"hang", "--journal", tmp.path()});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "2 entries claiming ATRACE_EVENT=hang, start or aged were not written by atraced"));
  CHECK(Has(text.out, "Culprit: job J1, rank 5, host n2, pid 1005"));
  CHECK_FALSE(Has(text.out, "Rank 2 is claimed"));
  CHECK_FALSE(Has(text.out, "4242"));
  CHECK_FALSE(Has(text.out, "pwn"));
  CHECK_FALSE(Has(text.out, "\x1b"));
  const auto json = Ctl({"hang", "--journal", tmp.path(), "--json"});
  CHECK(Has(json.out, "\"forged_entries\":2"));
  CHECK_FALSE(Has(json.out, "pwn"));

  SECTION("only forged entries: an error with a hint, not an empty report") {
    TempDir only;
    REQUIRE(WriteJournal(only.path(), "remote-n1", {forged}, &why));
    const auto none = Ctl({"hang", "--journal", only.path()});
    CHECK(none.exit_code == 1);
    CHECK(none.out.empty());
    CHECK(Has(none.err, "no hang entry of atraced in " + only.path() + " (1 forged entries ignored)"));
  }
}

TEST_CASE("hang --journal: a world size of 16777216 is reported as ranges, in a small output",
          "[atracectl][hang][journal][security]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::string why;
  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", HungJob("J1", 16777216), &why));
  const auto text = Ctl({"hang", "--journal", tmp.path()});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Ranks seen: 0-7 of 16777216 (world size)\nMissing ranks: 8-16777215: "));
  CHECK(text.out.size() < 16384);
  const auto json = Ctl({"hang", "--journal", tmp.path(), "--json"});
  CHECK(Has(json.out, "\"ranks_expected\":\"0-16777215\",\"world_size\":16777216,"));
  CHECK(Has(json.out, "\"missing\":\"8-16777215\",\"missing_count\":16777208,"));
  CHECK(json.out.size() < 16384);
}

TEST_CASE("hang --journal: no hang entry, no such job or no directory is an error with a hint",
          "[atracectl][hang][journal]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::string why;
  // A directory with atraced's start entries only: the job ran, nothing stalled.
  REQUIRE(WriteJournal(tmp.path(), "remote-n0", {AtracedStart("n0", "J1", 0, 2, 10), AtracedStart("n0", "J1", 1, 2, 11)}, &why));
  const auto none = Ctl({"hang", "--journal", tmp.path()});
  CHECK(none.exit_code == 1);
  CHECK(none.out.empty());
  CHECK(Has(none.err, "atracectl: hang: no hang entry of atraced in " + tmp.path() + "\nhint: "));
  CHECK(Has(none.err, "journalctl -D " + tmp.path() + " ATRACE_EVENT=start"));

  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", HungJob(), &why));
  const auto other = Ctl({"hang", "--journal", tmp.path(), "--job", "J2"});
  CHECK(other.exit_code == 1);
  CHECK(other.out.empty());
  CHECK(Has(other.err, "no hang entry of atraced for job J2 in "));
  CHECK(Has(other.err, "without --job lists every job with hang entries"));

  const auto missing = Ctl({"hang", "--journal", tmp / "nowhere"});
  CHECK(missing.exit_code == 1);
  CHECK(Has(missing.err, "atracectl: hang: " + (tmp / "nowhere") + ": "));
}

TEST_CASE("hang --journal: a rank that started and has no hang entry is named with its host", "[atracectl][hang][journal]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::vector<Fields> entries = HungJob("J1", 9);
  entries.push_back(AtracedStart("n2", "J1", 8, 9, 1008));
  std::string why;
  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", entries, &why));
  const auto text = Ctl({"hang", "--journal", tmp.path()});
  INFO(text.out);
  CHECK(Has(text.out, "Missing ranks: 8: expected by the world size, with no hang entry in the journal"));
  CHECK(Has(text.out, "Started, with no hang entry: rank 8 (n2, pid 1008)\n"));
}

TEST_CASE("hang --journal --follow reports a job once no new entry of it came for --quiet seconds",
          "[atracectl][hang][journal]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::string why;
  REQUIRE(WriteJournal(tmp.path(), "remote-old", {AtracedStart("n0", "J1", 0, 8, 1000)}, &why));
  const std::string out_path = tmp / "follow.out";
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(out >= 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  std::vector<std::string> args = {ATRACECTL_BINARY, "hang", "--journal", tmp.path(), "--follow", "--quiet", "2", "--json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out);
  const auto poll = [&](const std::string& needle) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Has(ReadFile(out_path), needle)) return true;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // it ended: it must not
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  // A start entry alone is no hang: nothing is reported for it. The hang entries come later,
  // in a new journal file, as journal-remote writes one per host.
  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", HungJob(), &why, 1700000001000000ull));
  const bool reported = poll("\"culprits\":[{\"job\":\"J1\",\"rank\":5,\"host\":\"n2\",\"pid\":1005");
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::string followed = ReadFile(out_path);
  INFO(followed);
  CHECK(reported);
  // Once: one report of J1 for its one stall.
  size_t reports = 0;
  const std::string report = "{\"job\":\"J1\",\"ranks_expected\"";
  for (size_t at = followed.find(report); at != std::string::npos; at = followed.find(report, at + 1)) ++reports;
  CHECK(reports == 1);
}

TEST_CASE("hang --journal --exec runs CMD once per job with its hosts file, and journal text never becomes shell text",
          "[atracectl][hang][journal][security]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::vector<Fields> entries = HungJob();
  // Hosts and a job no shell may read: the hosts are left out of %h, the job's entry is
  // malformed (the daemon's label rule) and ignored.
  entries.push_back(AtracedHang("n3;touch " + (tmp / "pwned1"), "J1", 8, 8, 2000, JobFrames(false)));
  entries.push_back(AtracedHang("$(touch " + (tmp / "pwned2") + ")", "J1", 9, 8, 2001, JobFrames(false)));
  entries.push_back(AtracedHang("n4", "J'$(touch " + (tmp / "pwned3") + ")\n", 0, 8, 2002, JobFrames(false)));
  std::string why;
  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", entries, &why));
  const std::string cmd = "cat %h > " + (tmp / "hosts-%j") + "; printf '%%s|' %j >> " + (tmp / "jobs");
  const auto r = Ctl({"hang", "--journal", tmp.path(), "--exec", cmd});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(ReadFile(tmp / "jobs") == "J1|");
  CHECK(ReadFile(tmp / "hosts-J1") == "n0\nn1\nn2\n");
  CHECK_FALSE(Exists(tmp / "pwned1"));
  CHECK_FALSE(Exists(tmp / "pwned2"));
  CHECK_FALSE(Exists(tmp / "pwned3"));
  CHECK(Has(r.out, "2 host name(s) that are no plain host name were left out of the hosts."));
  CHECK(Has(r.out, "1 entries of atraced's were malformed and ignored (the first: ATRACE_JOB: absent or not a job label)."));
}

TEST_CASE("hang --journal --exec's substitution: hostile values reach CMD as one word each, never as shell text",
          "[atracectl][hang][journal][security]") {
  CHECK(j::SubstituteCommand("dump %j from %h, 100%% %x %") == "dump \"$1\" from \"$2\", 100% %x %");
  TempDir tmp;
  const std::vector<std::string> hostile = {"a'b", "$(touch " + (tmp / "p1") + ")", "`touch " + (tmp / "p2") + "`",
                                            "x\ntouch " + (tmp / "p3"), "-rf ; touch " + (tmp / "p4"), "\"; touch " + (tmp / "p5") + "; \""};
  for (const std::string& job : hostile) {
    std::string error;
    const int status = j::RunJobCommand("printf '%%s' %j > " + (tmp / "out") + "; cat %h >> " + (tmp / "out"), job,
                                        {"n0", "bad;host", "n1"}, &error);
    INFO(job << " " << error);
    CHECK(status == 0);
    CHECK(ReadFile(tmp / "out") == job + "n0\nn1\n");
  }
  for (const char* p : {"p1", "p2", "p3", "p4", "p5"}) CHECK_FALSE(Exists(tmp / p));
  CHECK(atracectl::ShellQuote("it's") == "'it'\\''s'");
  CHECK(atracectl::SafeHostName("node-01.rack2_a"));
  CHECK_FALSE(atracectl::SafeHostName("-oProxyCommand=x"));
  CHECK_FALSE(atracectl::SafeHostName("n0 n1"));
  CHECK_FALSE(atracectl::SafeHostName(std::string(254, 'a')));
}

TEST_CASE("hang --journal: a rank whose dump atraced aged is named aged with its reason, host and time, not missing",
          "[atracectl][hang][journal][aged]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  // Ranks 3 and 7 hang-dumped, then the byte budget removed their dumps on n0 and n1; rank 6
  // never got a hang entry and nothing of it aged: missing.
  std::vector<Fields> entries = HungJob();
  entries.erase(entries.begin() + 7);
  entries.erase(entries.begin() + 6);
  entries.erase(entries.begin() + 3);
  entries.push_back(AtracedAgedDump("n0", "J1", 3, 8, 1003, "bytes"));
  entries.push_back(AtracedAgedDump("n1", "J1", 7, 8, 1007, "bytes"));
  // An aged directory of another job, and one of no dump (no ATRACE_DUMP): neither says
  // anything of J1's ranks.
  entries.push_back(AtracedAgedDump("n0", "J2", 6, 8, 2006, "count"));
  Fields plain = AtracedAgedDump("n2", "J1", 6, 8, 1006, "count");
  plain.erase(std::remove_if(plain.begin(), plain.end(), [](const auto& f) { return f.first == "ATRACE_DUMP"; }),
              plain.end());
  entries.push_back(plain);
  // Forged: a user's process says rank 6's dump aged, with an escape sequence in its host's
  // reason; journald's trusted fields say it is not atraced.
  Fields forged = AtracedAgedDump("n2", "J1", 6, 8, 4242, "bytes\x1b]0;pwn\x07");
  for (auto& [name, value] : forged) {
    if (name == "_UID") value = "1000";
  }
  entries.push_back(forged);
  std::string why;
  REQUIRE(WriteJournal(tmp.path(), "remote-hosts", entries, &why));
  INFO(why);
  const auto text = Ctl({"hang", "--journal", tmp.path(), "--job", "J1"});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Ranks seen: 0-2,4-5 of 8 (world size)\n"));
  CHECK(Has(text.out, "Aged ranks: 3 on n0: their dumps were removed by the byte budget (max-use) at "));
  CHECK(Has(text.out, "Aged ranks: 7 on n1: their dumps were removed by the byte budget (max-use) at "));
  CHECK(Has(text.out, ", before export. Raise max-use in atraced.conf, or export sooner after a dump.\n"));
  CHECK(Has(text.out, "Missing ranks: 6: expected by the world size"));
  CHECK_FALSE(Has(text.out, "Missing ranks: 3"));
  CHECK_FALSE(Has(text.out, "pwn"));
  CHECK_FALSE(Has(text.out, "\x1b"));
  CHECK(Has(text.out, "1 entries claiming ATRACE_EVENT=hang, start or aged were not written by atraced"));

  const auto json = Ctl({"hang", "--journal", tmp.path(), "--job", "J1", "--json"});
  INFO(json.out);
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"missing\":\"6\",\"missing_count\":1,\"aged\":[{\"rank\":3,\"host\":\"n0\",\"reason\":\"bytes\","));
  CHECK(Has(json.out, "{\"rank\":7,\"host\":\"n1\",\"reason\":\"bytes\","));
  CHECK(Has(json.out, "\"exported\":false,\"uid\":1000,\"dir\":\"/var/log/ascend/atrace/trace_1003_1003_"));
  CHECK(Has(json.out, "\"forged_entries\":1"));
}

TEST_CASE("an aged entry counts only when atraced wrote it about a dump, with a reason it ages for",
          "[atracectl][hang][journal][aged]") {
  const Fields good = AtracedAgedDump("n0", "J1", 3, 8, 77, "keep-free");
  auto parsed = j::ParseHangEntry(View(good), 5);
  REQUIRE(parsed.kind == j::EntryKind::kAged);
  CHECK(parsed.entry.aged);
  CHECK_FALSE(parsed.entry.hang);
  CHECK(parsed.entry.reason == "keep-free");
  CHECK(parsed.entry.rank == 3);
  CHECK(parsed.entry.host == "n0");
  CHECK_FALSE(parsed.entry.exported);
  const auto with = [&good](const std::string& field, const std::string& value) { return ParsedWith(good, field, value); };
  CHECK(with("_UID", "1000").kind == j::EntryKind::kForged);
  CHECK(with("ATRACE_REASON", "disk full").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_DUMP", "crash").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_RANK", "x").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_EXPORTED", "1").entry.exported);
  Fields no_dump = good, no_rank = good;
  std::erase_if(no_dump, [](const auto& f) { return f.first == "ATRACE_DUMP"; });
  std::erase_if(no_rank, [](const auto& f) { return f.first == "ATRACE_RANK"; });
  CHECK(j::ParseHangEntry(View(no_dump), 5).kind == j::EntryKind::kOther);  // an ordinary directory
  CHECK(j::ParseHangEntry(View(no_rank), 5).kind == j::EntryKind::kOther);  // no rank's evidence
}

TEST_CASE("a hang entry is atraced's only by its trusted fields, and each field is checked", "[atracectl][hang][journal]") {
  const Fields good = AtracedHang("n0", "J1", 3, 8, 77, JobFrames(true));
  auto parsed = j::ParseHangEntry(View(good), 5);
  REQUIRE(parsed.kind == j::EntryKind::kHang);
  CHECK(parsed.entry.job == "J1");
  CHECK(parsed.entry.rank == 3);
  CHECK(parsed.entry.world_size == 8);
  CHECK(parsed.entry.pid == 77);
  CHECK(parsed.entry.host == "n0");
  CHECK(parsed.entry.frames.size() == 3);
  REQUIRE(parsed.entry.last_records.size() == 1);
  CHECK(parsed.entry.last_records[0].first == "schedule");

  const auto with = [&good](const std::string& field, const std::string& value) { return ParsedWith(good, field, value); };
  CHECK(with("_UID", "1000").kind == j::EntryKind::kForged);
  CHECK(with("_UID", "00").kind == j::EntryKind::kForged);
  CHECK(with("_COMM", "python3").kind == j::EntryKind::kHang);  // atraced.service says it
  Fields twice = good;
  twice.emplace_back("_UID", "1000");  // a trusted field given twice is no trusted field
  CHECK(j::ParseHangEntry(View(twice), 5).kind == j::EntryKind::kForged);
  CHECK(with("ATRACE_EVENT", "created").kind == j::EntryKind::kOther);
  CHECK(with("ATRACE_RANK", "-1").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_RANK", "01").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_WORLD_SIZE", "0").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_JOB", "a b").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_PID", "0").kind == j::EntryKind::kMalformed);
  CHECK(with("ATRACE_PID", "99999999999").kind == j::EntryKind::kMalformed);
  const auto long_frame = with("ATRACE_FRAME_1", std::string(100000, 'f'));
  REQUIRE(long_frame.kind == j::EntryKind::kHang);
  CHECK(long_frame.entry.frames[1].size() == 1024);
  Fields many = good;
  for (int i = 0; i < 1000; ++i) many.emplace_back("ATRACE_FRAME_" + std::to_string(i + 3), "#9 0x1 0x0 m f+0x1");
  CHECK(j::ParseHangEntry(View(many), 5).entry.frames.size() == 32);

  const auto place = j::PlaceOfFrame("#1 0x401022 0x400000 /opt/job/train load_next_batch+0x22 at loader.c:88");
  CHECK(place.function == "load_next_batch");
  CHECK(place.source == "loader.c:88");
  CHECK(j::PlaceOfFrame("#0 0x401022 0x400000 /opt/job/train").function == "train+0x1022");
  CHECK(j::PlaceOfFrame("not a frame").function.empty());
}

namespace {

// A hang entry of job J2 (four ranks on n0) with its communicators as atraced writes them.
Fields WithComms(int rank, const std::vector<std::string>& comms) {
  Fields f = AtracedHang("n0", "J2", rank, 4, 2000 + rank, JobFrames(false));
  for (size_t i = 0; i < comms.size(); ++i) f.emplace_back("ATRACE_COLL_" + std::to_string(i), comms[i]);
  return f;
}

std::string Comm(int rank, int seq, int count, const std::string& name = "hccl_world_group") {
  return "rank=" + std::to_string(rank) + " size=4 seq=" + std::to_string(seq) + " op=1 count=" + std::to_string(count) +
         " dtype=3 reduce=0 peer=- completed=" + std::to_string(seq - 1) + " tracked=1 cut=0 name=" + name;
}

}  // namespace

TEST_CASE("hang --journal: the entries' communicators lead, a mismatch flagged, a hostile name escaped",
          "[atracectl][hang][journal][hccl]") {
  REQUIRE_JOURNAL_REMOTE();
  TempDir tmp;
  std::string why;
  // Rank 2 entered #4 with another count; rank 1 is behind at #3 in the tensor-parallel pair
  // whose name carries a terminal escape; rank 3's second communicator is no value of atraced's.
  const std::string hostile = "tp\\x1b[2J\\x0aMESSAGE=x";
  std::vector<Fields> entries{WithComms(0, {Comm(0, 4, 4096), Comm(0, 9, 16, hostile)}),
                              WithComms(1, {Comm(1, 4, 4096), Comm(1, 8, 16, hostile)}),
                              WithComms(2, {Comm(2, 4, 8192)}), WithComms(3, {Comm(3, 4, 4096)}),
                              WithComms(3, {Comm(3, 4, 4096), "rank=3 size=4 seq=4 op=99"})};
  for (auto& [name, v] : entries.back()) {
    if (name == "ATRACE_PID") v = "3000";  // its own process, so that the rank's good entry stays
  }
  REQUIRE(WriteJournal(tmp.path(), "remote-n0", entries, &why));
  INFO(why);
  const auto text = Ctl({"hang", "--journal", tmp.path(), "--job", "J2"});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "Collectives (each rank's ledger of HCCL calls):\n"));
  CHECK(Has(text.out, "    mismatch at #4, count:"));
  CHECK(Has(text.out, "last entered #8"));
  CHECK(text.out.find('\x1b') == std::string::npos);
  CHECK_FALSE(Has(text.out, "\nMESSAGE=x"));
  CHECK(Has(text.out, "1 entries of atraced's were malformed and ignored (the first: ATRACE_COLL_1: not a communicator's "
                      "last calls)"));

  const auto json = Ctl({"hang", "--journal", tmp.path(), "--job", "J2", "--json"});
  INFO(json.out);
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"mismatches\":[{\"seq\":4,"));
  CHECK(Has(json.out, "\"name\":\"tp\\u001b[2J\\nMESSAGE=x\""));
  CHECK(Has(json.out, "\"malformed_entries\":1"));
}

TEST_CASE("a hang entry's communicators: read in field order, bounded, a forged one never read",
          "[atracectl][hang][journal][hccl]") {
  Fields good = WithComms(1, {Comm(1, 4, 4096), Comm(1, 9, 16, "tp")});
  auto parsed = j::ParseHangEntry(View(good), 5);
  REQUIRE(parsed.kind == j::EntryKind::kHang);
  REQUIRE(parsed.entry.comms.size() == 2);
  CHECK(parsed.entry.comms[0].summary.name == "hccl_world_group");
  CHECK(parsed.entry.comms[0].summary.last_entered.comm_seq == 4);
  CHECK(parsed.entry.comms[0].summary.last_completed == std::optional<uint64_t>(3));
  CHECK(parsed.entry.comms[1].summary.name == "tp");

  Fields many = good;
  for (int i = 2; i < 1000; ++i) many.emplace_back("ATRACE_COLL_" + std::to_string(i), Comm(1, i, 1, "c" + std::to_string(i)));
  CHECK(j::ParseHangEntry(View(many), 5).entry.comms.size() == atraced::proto::kMaxJournalCommunicators);

  Fields bad = good;
  bad.emplace_back("ATRACE_COLL_2", "rank=1 size=4 seq=4 op=1 count=1 dtype=3 reduce=0 peer=- completed=3 tracked=1 cut=0 name=a b");
  CHECK(j::ParseHangEntry(View(bad), 5).kind == j::EntryKind::kMalformed);

  Fields forged = good;
  for (auto& [name, v] : forged) {
    if (name == "_UID") v = "1000";
  }
  const auto f = j::ParseHangEntry(View(forged), 5);
  CHECK(f.kind == j::EntryKind::kForged);
  CHECK(f.entry.comms.empty());
}
