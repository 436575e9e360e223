// Job and rank labels end to end: a process's environment, through libatrace_client's
// LABELS, the daemon's order log (across a restart), to atracectl list's JOB and RANK
// columns, its --job/--rank filters and its --json keys.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace atraced::testing;

namespace {

RunResult Ctl(const DaemonProcess& d, std::vector<std::string> args, const std::map<std::string, std::string>& env = {},
              const std::string& input = "") {
  std::vector<std::string> argv{ATRACECTL_BINARY, "--socket", d.socket()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, {.env = env, .input = input});
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// One directory made by `atracectl emit` run with `env`: its libatrace_client sends the labels.
RunResult Emit(const DaemonProcess& d, const std::map<std::string, std::string>& env) {
  return Ctl(d, {"emit", "--event", "schedule", "--object", "o"}, env, "x");
}

}  // namespace

TEST_CASE("atracectl list: JOB and RANK from the process's environment, filters and JSON, across a restart",
          "[atracectl][list][labels]") {
  TempDir tmp;
  const std::string root = tmp / "root";
  {
    DaemonProcess d({{}, {}, true, 10, std::nullopt, root});
    REQUIRE(d.Start());
    REQUIRE(Emit(d, {{"ATRACE_JOB", "J1"}, {"SLURM_JOB_ID", "77"}, {"RANK_ID", "3"}, {"RANK_SIZE", "8"}}).exit_code == 0);
    REQUIRE(Emit(d, {{"SLURM_JOB_ID", "77"}, {"SLURM_PROCID", "12"}, {"SLURM_NTASKS", "16"}}).exit_code == 0);
    REQUIRE(Emit(d, {}).exit_code == 0);
    REQUIRE(d.Stop() == 0);
  }
  DaemonProcess d({{}, {}, true, 10, std::nullopt, root});
  REQUIRE(d.Start());
  auto list = Ctl(d, {"list"});
  REQUIRE(list.exit_code == 0);
  CHECK(Has(list.out, "\tSTATE\tJOB\tRANK\n"));
  CHECK(Has(list.out, "\t-\tJ1\t3\n"));
  CHECK(Has(list.out, "\t-\t77\t12\n"));
  CHECK(Has(list.out, "\t-\t-\t-\n"));
  auto j1 = Ctl(d, {"list", "--job", "J1", "--json"});
  REQUIRE(j1.exit_code == 0);
  CHECK(Has(j1.out, "\"job\":\"J1\",\"rank\":3,\"world_size\":8}"));
  CHECK_FALSE(Has(j1.out, "\"job\":\"77\""));
  auto r12 = Ctl(d, {"list", "--rank", "12", "--json"});
  CHECK(Has(r12.out, "\"job\":\"77\",\"rank\":12,\"world_size\":16}"));
  CHECK(Has(r12.out, "{\"entries\":[{"));
  CHECK(Ctl(d, {"list", "--job", "J2", "--json"}).out == "{\"entries\":[]}\n");
  CHECK(Has(Ctl(d, {"list", "--json"}).out, "\"job\":null,\"rank\":null,\"world_size\":null}"));
}

TEST_CASE("a label that is not one is left out, named with its variable and value once, and the others kept",
          "[atracectl][labels][security]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto made = Emit(d, {{"ATRACE_JOB", "J\x1b]0;owned\x07"}, {"RANK_ID", "1"}});
  REQUIRE(made.exit_code == 0);  // tracing goes on
  CHECK(Has(made.err, "a job/rank label of the environment is not sent: ATRACE_JOB='J\\x1b]0;owned\\x07': job: only "
                      "letters, digits and . _ : @ + = - are allowed"));
  CHECK_FALSE(Has(made.err, "\x1b"));
  auto bad_rank = Emit(d, {{"ATRACE_JOB", "J"}, {"RANK", "-3"}});
  CHECK(Has(bad_rank.err, "RANK='-3': rank: not a decimal from 0 to 2147483647"));
  auto list = Ctl(d, {"list", "--json"});
  INFO(list.out);
  // Each process's valid labels were kept: the first's rank, the second's job.
  CHECK(Has(list.out, "\"job\":null,\"rank\":1,\"world_size\":null}"));
  CHECK(Has(list.out, "\"job\":\"J\",\"rank\":null,\"world_size\":null}"));
  CHECK_FALSE(Has(list.out, "owned"));
  // The filters refuse what no label can be, escaped.
  auto filter = Ctl(d, {"list", "--job", "J\x1b[2J"});
  CHECK(filter.exit_code == 2);
  CHECK(Has(filter.err, "--job 'J\\x1b[2J': job: only letters"));
  CHECK(Ctl(d, {"list", "--rank", "x"}).exit_code == 2);
}

TEST_CASE("atracectl export --format tar --job: only the job's directories, with bundle.jsonl first",
          "[atracectl][export][labels]") {
  TempDir tmp;
  DaemonProcess d;
  REQUIRE(d.Start());
  REQUIRE(Emit(d, {{"ATRACE_JOB", "J1"}, {"RANK_ID", "3"}, {"RANK_SIZE", "8"}}).exit_code == 0);
  REQUIRE(Emit(d, {{"ATRACE_JOB", "J2"}, {"RANK_ID", "0"}}).exit_code == 0);
  const std::string bundle = tmp / "j1.tar.gz";
  auto exported = Ctl(d, {"export", "--format", "tar", "--job", "J1", "-o", bundle});
  REQUIRE(exported.exit_code == 0);
  auto members = Run({"tar", "-tzf", bundle});
  REQUIRE(members.exit_code == 0);
  CHECK(members.out.rfind("bundle.jsonl\n", 0) == 0);
  auto meta = Run({"tar", "-xzOf", bundle, "bundle.jsonl"});
  REQUIRE(meta.exit_code == 0);
  std::istringstream lines(meta.out);
  std::string host, dir, more;
  std::getline(lines, host);
  std::getline(lines, dir);
  CHECK_FALSE(std::getline(lines, more));  // J2's directory is not in it
  CHECK(host.rfind("{\"record\":\"host\",\"format\":1,\"host\":", 0) == 0);
  for (const char* key : {"\"boot_id\":\"", "\"realtime_us\":", "\"monotonic_us\":", "\"clock_synchronized\":",
                          "\"adjtimex\":\"", "\"utc_offset_s\":"}) {
    CHECK(Has(host, key));
  }
  // The uid the daemon made it for and its sequence number: hang names a rank's claimants by uid.
  CHECK(Has(dir, "\"job\":\"J1\",\"rank\":3,\"world_size\":8,\"uid\":" + std::to_string(::getuid()) + ",\"seq\":"));
  CHECK(Has(dir, "\"comm\":\"atracectl\""));
  int dirs = 0;
  for (size_t at = members.out.find("/schedule_tracer_o.txt"); at != std::string::npos;
       at = members.out.find("/schedule_tracer_o.txt", at + 1)) {
    ++dirs;
  }
  CHECK(dirs == 1);
}
