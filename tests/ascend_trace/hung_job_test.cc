// A hung job end to end (issue 41): three daemons on three roots stand for three hosts; six
// CANN-API rank processes (hang_child.c: every signal blocked, two threads deadlocked), two
// per host, labelled by their environment (RANK_ID 0-5, RANK_SIZE, ATRACE_JOB=J1); ranks 0-4
// wait in one place, rank 5 in another. Then, per host, `atracectl dump --job J1` and
// `atracectl export --format tar --job J1`, and `atracectl hang` over the three bundles.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "crash_util.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace crash_test;
using atraced::testing::Run;
using atraced::testing::RunResult;
using atraced::testing::TempDir;

namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One rank: hang_child with the job's environment, once it printed "ready" and its main
// thread sleeps; killed and reaped at scope exit.
struct Rank {
  pid_t pid = -1;
  Rank(const DaemonProcess& d, int rank, int world_size, bool elsewhere) {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(out[1], 1);
      const std::string socket = "ATRACED_SOCKET=" + d.socket(), rank_id = "RANK_ID=" + std::to_string(rank),
                        size = "RANK_SIZE=" + std::to_string(world_size);
      std::vector<const char*> envp{socket.c_str(), "ATRACE_QUIET=1", "ATRACE_JOB=J1", rank_id.c_str(), size.c_str()};
      if (elsewhere) envp.push_back("HANG_MAIN_ELSEWHERE=1");
      envp.push_back(nullptr);
      const char* argv[] = {ASCEND_TRACE_HANG_CHILD, "20", "1", nullptr};
      ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp.data()));
      ::_exit(127);
    }
    ::close(out[1]);
    const std::string got = FirstLineOf(out[0]);
    REQUIRE(got.rfind("ready ", 0) == 0);
    // Until the main thread sleeps in its join (at most 30 s).
    for (int i = 0; i < 30000; ++i) {
      const std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
      const size_t paren = stat.rfind(')');
      if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S') break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~Rank() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

RunResult Ctl(std::vector<std::string> args) {
  args.insert(args.begin(), ATRACECTL_BINARY);
  return Run(args);
}

// The whole runbook over a job of six ranks labelled with `world_size`: the three bundles.
std::string HangJson(const TempDir& tmp, int world_size, std::string* text) {
  std::vector<std::unique_ptr<DaemonProcess>> hosts;
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int h = 0; h < 3; ++h) {
    hosts.push_back(std::make_unique<DaemonProcess>());
    REQUIRE(hosts.back()->Start());
  }
  for (int r = 0; r < 6; ++r) ranks.push_back(std::make_unique<Rank>(*hosts[static_cast<size_t>(r / 2)], r, world_size, r == 5));
  std::vector<std::string> bundles;
  for (int h = 0; h < 3; ++h) {
    const std::string socket = hosts[static_cast<size_t>(h)]->socket();
    auto dump = Ctl({"--socket", socket, "dump", "--job", "J1"});
    INFO(dump.err);
    REQUIRE(dump.exit_code == 0);
    bundles.push_back(tmp / ("host" + std::to_string(h) + ".tar.gz"));
    auto exported = Ctl({"--socket", socket, "export", "--format", "tar", "--job", "J1", "-o", bundles.back()});
    INFO(exported.err);
    REQUIRE(exported.exit_code == 0);
  }
  auto hang = Ctl({"hang", bundles[0], bundles[1], bundles[2]});
  INFO(hang.err);
  REQUIRE(hang.exit_code == 0);
  *text = hang.out;
  auto json = Ctl({"hang", "--json", bundles[0], bundles[1], bundles[2]});
  REQUIRE(json.exit_code == 0);
  return json.out;
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("hung job: dump --job and export --job on three hosts, hang names rank 5 apart from ranks 0-4",
          "[hang][dump][labels]") {
  TempDir tmp;
  std::string text;
  const std::string json = HangJson(tmp, 6, &text);
  INFO(text);
  CHECK(Has(json, "\"ranks_expected\":\"0-5\",\"world_size\":6,\"world_size_claims\":{\"6\":6},"));
  CHECK(Has(json, "\"ranks_seen\":[0,1,2,3,4,5],\"missing\":\"\",\"missing_count\":0,\"conflicts\":[],"));
  CHECK(Has(json, "\"classes\":[{\"ranks\":[5],\"ranges\":\"5\",\"count\":1,\"stack\":["));
  CHECK(Has(json, "{\"ranks\":[0,1,2,3,4],\"ranges\":\"0-4\",\"count\":5,\"stack\":["));
  CHECK(Has(json, "\"outliers\":[5],"));
  CHECK(Has(json, "\"job_uid\":" + std::to_string(::getuid()) + ","));  // bundle.jsonl's uid, from LIST
  CHECK(Has(text, "Likely culprits: ranks 5:"));
  CHECK(Has(text, "join_elsewhere"));
  CHECK(Has(text, "[0-5] locker_main"));  // every rank's deadlocked threads, in the tree
  CHECK(Has(json, "\"hang_a\":{\"ts_us\":"));  // each rank's last record of its tracer
}

TEST_CASE("hung job: with RANK_SIZE 7 rank 6 is named missing", "[hang][dump][labels]") {
  TempDir tmp;
  std::string text;
  const std::string json = HangJson(tmp, 7, &text);
  CHECK(Has(json, "\"missing\":\"6\",\"missing_count\":1,"));
  CHECK(Has(text, "Missing ranks: 6: expected by the world size, in no bundle."));
  CHECK(Has(text, "This report cannot decide where dumps are missing"));
}
