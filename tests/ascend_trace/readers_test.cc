// Who reads a crash report and the traces beside it (issue 39), against the real daemon as
// root: A's drop-in process crashes; A reads its report with cat, atracectl show and
// atracectl info; B is refused and told whose it is; C (the reader group) and root read it;
// B's list shows B's own and says the rest are hidden; a restart keeps all of it.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "crash_util.h"
#include "support/missing_tool.h"
#include "support/reachable_program.h"
#include "support/subprocess.h"
#include "support/test_users.h"

using namespace crash_test;
using atraced::testing::Identity;
using atraced::testing::Run;
using atraced::testing::RunResult;
using atraced::testing::TestUsers;

namespace {

RunResult CtlAs(const DaemonProcess& d, const Identity& who, std::vector<std::string> args) {
  args.insert(args.begin(), {ATRACECTL_BINARY, "--socket", d.socket()});
  return Run(args, {.as = who});
}
bool Has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// The SEQ of `pid`'s stackcore directory, as root's listing says.
std::string SeqOf(const DaemonProcess& d, pid_t pid) {
  const RunResult r = Run({ATRACECTL_BINARY, "--socket", d.socket(), "info", std::to_string(pid), "--json"});
  const size_t at = r.out.find("\"seq\":");
  REQUIRE(at != std::string::npos);
  return r.out.substr(at + 6, r.out.find_first_not_of("0123456789", at + 6) - at - 6);
}

// A drop-in process of `who` that crashes with SIGSEGV after `records` records; the path of
// its report, and its pid in *pid.
std::string CrashAs(const DaemonProcess& d, const Identity& who, int records, pid_t* pid) {
  Child child(d, "segv", records, {}, "", "", &who);
  RequireDiedOf(child, SIGSEGV);
  *pid = child.pid;
  const auto dirs = AwaitStackcore(d, child.pid);
  REQUIRE(dirs.size() == 1);
  for (const auto& name : atraced::testing::ListNames(dirs[0])) {
    if (name.rfind("stackcore_tracer_11_", 0) == 0) return dirs[0] + "/" + name;
  }
  FAIL("no report in " << dirs[0]);
  return "";
}

}  // namespace

TEST_CASE("readers: A reads its own crash report with cat, show and info, B is told whose it is, C and root "
          "read it, a restart keeps it",
          "[crash][readers]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(atraced::testing::ReadersDaemon(u));
  REQUIRE(atraced::testing::StartReachable(d));
  pid_t crashed = 0;
  const std::string report = CrashAs(d, u.a.id, 3, &crashed);
  const std::string seq = SeqOf(d, crashed);
  const std::string pid = std::to_string(crashed);
  // The daemon tells B nothing of A's directory (LIST's ATR_LIST_HIDDEN): not whose it is.
  const std::string whose = "SEQ " + seq + " belongs to another user: readable by that user, root and group " +
                            u.reader_group();

  for (int start = 0; start < 2; ++start) {
    INFO((start == 0 ? "first start" : "after a restart"));
    const RunResult cat = Run({"cat", report}, {.as = u.a.id});
    CHECK(cat.exit_code == 0);
    CHECK(Has(cat.out, "caught a fatal signal"));
    const RunResult show = CtlAs(d, u.a.id, {"show", seq});
    INFO(show.err);
    CHECK(show.exit_code == 0);
    CHECK(Has(show.out, "caught a fatal signal"));
    CHECK(Has(show.out, "record 2"));  // the rings saved beside the report: A's traces
    const RunResult info = CtlAs(d, u.a.id, {"info", pid});
    INFO(info.err);
    CHECK(info.exit_code == 0);
    CHECK(Has(info.out, "        Signal: 11 (SIGSEGV)\n"));

    const RunResult b_cat = Run({"cat", report}, {.as = u.b.id});
    CHECK(b_cat.exit_code != 0);
    CHECK(Has(b_cat.err, "Permission denied"));
    const RunResult b_show = CtlAs(d, u.b.id, {"show", seq});
    CHECK(b_show.exit_code == 1);
    INFO(b_show.err);
    CHECK(Has(b_show.err, whose));
    const RunResult b_info = CtlAs(d, u.b.id, {"info", pid});
    CHECK(b_info.exit_code == 1);
    CHECK(Has(b_info.err, "no event directory of pid " + pid));  // A's pid is not B's to learn
    CHECK_FALSE(Has(b_info.out, "Program:"));  // never an empty report with status 0
    // B's list: B's own (none), and a line that says the rest are hidden and who sees all.
    const RunResult b_list = CtlAs(d, u.b.id, {"list"});
    CHECK(b_list.exit_code == 0);
    CHECK_FALSE(Has(b_list.out, pid));
    CHECK(Has(b_list.err, "of other users hidden"));
    CHECK(Has(b_list.err, "members of group " + u.reader_group() + " see all"));

    const RunResult c_show = CtlAs(d, u.c.id, {"show", seq});
    CHECK(c_show.exit_code == 0);
    CHECK(Has(c_show.out, "caught a fatal signal"));
    INFO(c_show.err);
    const RunResult c_list = CtlAs(d, u.c.id, {"list"});
    CHECK(Has(c_list.out, pid));
    CHECK_FALSE(Has(c_list.err, "hidden"));
    CHECK(Run({"cat", report}).exit_code == 0);  // root
    if (start == 0) {
      REQUIRE(d.Stop() == 0);
      REQUIRE(atraced::testing::StartReachable(d));
    }
  }
}

TEST_CASE("readers: info names a report it cannot read and exits 1, never an empty report with 0",
          "[crash][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("setfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(atraced::testing::ReadersDaemon(u));
  REQUIRE(atraced::testing::StartReachable(d));
  pid_t crashed = 0;
  const std::string report = CrashAs(d, u.a.id, 1, &crashed);
  // An administrator took A's read away from the report (or a file system lost it).
  REQUIRE(Run({"setfacl", "-x", "u:" + std::to_string(u.a.id.uid), report}).exit_code == 0);
  const RunResult info = CtlAs(d, u.a.id, {"info", std::to_string(crashed)});
  CHECK(info.exit_code == 1);
  CHECK(Has(info.err, "cannot be read: " + report + ": Permission denied"));
  CHECK(Has(info.out, "Error: cannot read it: Permission denied"));
}

TEST_CASE("readers: after an exec of a set-id program, the process's later traces are the new user's alone",
          "[crash][readers][setid]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  // The set-id copy finds libascend_trace by its RUNPATH in the build tree: the loader ignores
  // LD_LIBRARY_PATH for a set-id program, so a staged copy (reachable_program.h) cannot stand in.
  if (const std::string unreachable = atraced::testing::FirstUnreachable(ASCEND_TRACE_CRASH_CHILD); !unreachable.empty()) {
    WARN("skipped: a set-id program ignores LD_LIBRARY_PATH, and other users cannot reach the build tree: " << unreachable);
    return;
  }
  DaemonProcess d(atraced::testing::ReadersDaemon(u));
  REQUIRE(atraced::testing::StartReachable(d));
  // A set-user-id-B copy of the drop-in program, in a directory of root's that A may enter.
  const std::string dir = d.tmp().path() + "/setid";
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  const std::string setid = dir + "/crash_child";
  REQUIRE(Run({"cp", ASCEND_TRACE_CRASH_CHILD, setid}).exit_code == 0);
  REQUIRE(::chown(setid.c_str(), u.b.id.uid, u.b.id.gid) == 0);
  REQUIRE(::chmod(setid.c_str(), 04755) == 0);  // after chown, which clears the bit
  // A runs it: A's process reports once as A, then executes the set-id copy, which reports
  // again as the same process, now effectively B.
  Child child(d, "report-exec", 2, {"CRASH_CHILD_EXEC=" + setid}, "", "", &u.a.id);
  // Its exit status is not the point: under LeakSanitizer a set-id process (not dumpable)
  // fails the leak check at exit. Both reports were made before it, synchronously.
  INFO("exit status " << child.Wait());
  const auto dirs = DirsOf(d, "schedule", child.pid);
  INFO(d.log());
  REQUIRE(dirs.size() == 2);
  auto process_dir = [](const std::string& event) { return event.substr(0, event.rfind('/')); };
  CHECK(process_dir(dirs[0]) != process_dir(dirs[1]));  // a new process directory for the new owner
  CHECK(d.LogHas("pid " + std::to_string(child.pid) + " connected as uid " + std::to_string(u.b.id.uid)));
  // Each directory's trace is its owner's: A's is not B's to read, B's is not A's.
  size_t a_reads = 0, b_reads = 0;
  for (const auto& event : dirs) {
    const std::string file = event + "/schedule_tracer_crash_obj.txt";
    const bool a = Run({"cat", file}, {.as = u.a.id}).exit_code == 0;
    const bool b = Run({"cat", file}, {.as = u.b.id}).exit_code == 0;
    INFO(file << " A reads: " << a << ", B reads: " << b);
    CHECK(a != b);
    a_reads += a;
    b_reads += b;
    CHECK(Run({"cat", file}).exit_code == 0);  // root
  }
  CHECK(a_reads == 1);
  CHECK(b_reads == 1);
}

TEST_CASE("readers: A exports its own directories as a bundle, though A may only pass through the trace dir, and "
          "B's export of them is an export of nothing",
          "[crash][readers]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(atraced::testing::ReadersDaemon(u));
  REQUIRE(atraced::testing::StartReachable(d));
  pid_t crashed = 0;
  CrashAs(d, u.a.id, 3, &crashed);
  const std::string pid = std::to_string(crashed);
  // A bundle is written where its maker may write: a directory each user owns.
  const std::string out_dir = "/tmp/atraced-readers-export." + std::to_string(::getpid());
  REQUIRE(Run({"mkdir", "-m", "0777", out_dir}).exit_code == 0);
  struct Cleanup {
    std::string dir;
    ~Cleanup() { Run({"rm", "-rf", dir}); }
  } cleanup{out_dir};

  const RunResult a = CtlAs(d, u.a.id, {"export", "--format", "tar", "--pid", pid, "-o", out_dir + "/a.tar.gz"});
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(Has(a.err, "wrote 1 event directory"));
  const RunResult members = Run({"tar", "-tzf", out_dir + "/a.tar.gz"});
  REQUIRE(members.exit_code == 0);
  CHECK(members.out.rfind("bundle.jsonl\n", 0) == 0);  // the host's facts first, by their own names
  CHECK(Has(members.out, "\nstatus.json\n"));
  CHECK(Has(members.out, "\natrace/trace_"));
  CHECK(Has(members.out, "stackcore_tracer_11_" + pid + "_"));
  CHECK_FALSE(Has(members.out, "/tmp/"));  // no scratch path leaks into a member's name

  // B may read none of them: an export of nothing is an error that says what to do, and the
  // file B named holds nothing of A's.
  const RunResult b = CtlAs(d, u.b.id, {"export", "--format", "tar", "-o", out_dir + "/b.tar.gz"});
  INFO(b.err);
  CHECK(b.exit_code == 1);
  CHECK(Has(b.err, "of other users hidden"));
  CHECK(Has(b.err, "atracectl: export: no event directory you may read matches: nothing to export"));
  CHECK(atraced::testing::ReadFile(out_dir + "/b.tar.gz").empty());
}
