// `atracectl hang` over a job of eight ranks on two daemons, as processes over the libhccl
// double with LD_PRELOAD=libatrace_hccl.so (the double holds a collective until every rank of
// its communicator entered it). After `dump --job` and `export --job` on each daemon, hang
// leads with the communicator:
//   - rank 5 skips the last AllReduce: behind at #3, ranks 0-4,6-7 at #4;
//   - rank 3 makes AllReduce #3 with another count: a mismatch at #3, field count;
//   - rank 5 skips an AllReduce of its tensor-parallel pair (4, 5): the pair is named stuck,
//     and the world group, where rank 4 never arrives, is shown waiting on it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "rank_process.h"
#include "support/daemon_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using atraced::testing::DaemonProcess;
using atraced::testing::RunResult;
using hccl_ledger_test::Eventually;
using hccl_ledger_test::RankProcess;

namespace {

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Job J1: eight ranks, 0-3 on the first daemon and 4-7 on the second, each hccl_rank under
// libatrace_hccl, held once its calls are made (or blocked in one the others never join).
class EightRanks {
 public:
  EightRanks() {
    for (int h = 0; h < 2; ++h) {
      hosts_.push_back(std::make_unique<DaemonProcess>());
      REQUIRE(hosts_.back()->Start());
    }
  }

  // Starts rank `rank` making `calls` AllReduces, with `env` added to the job's environment.
  // Without `ledger`, the rank runs without libatrace_hccl, its double writing HCCL's own
  // atrace records through libascend_trace instead (hccl_entry_trace.h).
  RankProcess& Start(int rank, int calls, const std::vector<std::string>& env = {}, bool ledger = true) {
    const std::vector<std::string> argv{ATRACE_HCCL_RANK, std::to_string(rank), "8", std::to_string(calls), "hold"};
    std::vector<std::string> all{ledger ? "LD_PRELOAD=" ATRACE_HCCL_LIBRARY : "ATRACE_HCCL_DOUBLE_TRACE_LIB=" ATRACE_DROPIN_LIBRARY,
                                 "ATRACED_SOCKET=" + hosts_[static_cast<size_t>(rank / 4)]->socket(),
                                 "ATRACE_HCCL_DOUBLE_DIR=" + meeting_.path(), "ATRACE_QUIET=1", "ATRACE_JOB=J1",
                                 "RANK_ID=" + std::to_string(rank), "RANK_SIZE=8"};
    all.insert(all.end(), env.begin(), env.end());
    ranks_.push_back(std::make_unique<RankProcess>(argv, all));
    return *ranks_.back();
  }

  // The sequence number that rank `comm_rank` of communicator `comm` entered in the double's
  // rendezvous: once it reads the call's number, the rank is inside the double's function,
  // past libatrace_hccl's record of the call.
  uint64_t Entered(const std::string& comm, int comm_rank) const {
    const int fd = ::open((meeting_.path() + "/" + comm + ".rdv").c_str(), O_RDONLY | O_CLOEXEC);
    uint64_t v = 0;
    if (fd >= 0) {
      if (::pread(fd, &v, sizeof v, comm_rank * 8) != sizeof v) v = 0;
      ::close(fd);
    }
    return v;
  }

  // `dump --job J1` and `export --job J1` on each daemon: the two bundles.
  std::vector<std::string> Bundles() {
    std::vector<std::string> bundles;
    for (size_t h = 0; h < hosts_.size(); ++h) {
      const std::string socket = hosts_[h]->socket();
      auto dump = atraced::testing::Run({ATRACECTL_BINARY, "--socket", socket, "dump", "--job", "J1"});
      INFO(dump.err);
      REQUIRE(dump.exit_code == 0);
      bundles.push_back(tmp_ / ("host" + std::to_string(h) + ".tar.gz"));
      auto exported = atraced::testing::Run(
          {ATRACECTL_BINARY, "--socket", socket, "export", "--format", "tar", "--job", "J1", "-o", bundles.back()});
      INFO(exported.err);
      REQUIRE(exported.exit_code == 0);
    }
    return bundles;
  }

  // `atracectl hang BUNDLES` and `atracectl hang --json BUNDLES`, each required to succeed.
  struct Reports {
    std::string text, json, err;  // err: the text form's stderr
  };
  static Reports Hang(const std::vector<std::string>& bundles) {
    Reports out;
    for (const bool json : {false, true}) {
      std::vector<std::string> argv{ATRACECTL_BINARY, "hang"};
      if (json) argv.push_back("--json");
      argv.insert(argv.end(), bundles.begin(), bundles.end());
      const RunResult r = atraced::testing::Run(argv);
      INFO(r.out);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      (json ? out.json : out.text) = r.out;
      if (!json) out.err = r.err;
    }
    return out;
  }

 private:
  atraced::testing::TempDir tmp_, meeting_;
  std::vector<std::unique_ptr<DaemonProcess>> hosts_;
  std::vector<std::unique_ptr<RankProcess>> ranks_;
};

}  // namespace

TEST_CASE("hang over the bundles of two daemons: rank 5 skipped an AllReduce, named behind at #3, the others at #4",
          "[hang][hccl]") {
  EightRanks job;
  std::vector<RankProcess*> ranks;
  // Rank 5 makes three AllReduces and waits; the others make four.
  for (int r = 0; r < 8; ++r) ranks.push_back(&job.Start(r, r == 5 ? 3 : 4));
  REQUIRE(ranks[5]->WaitForLine("finished"));
  for (int r = 0; r < 8; ++r) {
    if (r == 5) continue;
    REQUIRE(ranks[static_cast<size_t>(r)]->WaitForLine("enter 4"));
    REQUIRE(Eventually([&] { return job.Entered("hccl_world_group", r) == 4; }));
  }
  const auto hang = EightRanks::Hang(job.Bundles());
  INFO(hang.text);
  // The communicator leads the report.
  CHECK(hang.text.rfind("Collectives (each rank's ledger of HCCL calls):\n"
                        "Behind: rank 5 in comm hccl_world_group (last entered #3, where ranks 0-4,6-7 entered #4)\n",
                        0) == 0);
  CHECK(Has(hang.text, "    rank 5 (1): last entered #3 AllReduce (3 Ki fp16, sum)"));
  CHECK(Has(hang.text, "    ranks 0-4,6-7 (7): last entered #4 AllReduce (4 Ki fp16, sum)"));
  CHECK_FALSE(Has(hang.text, "missing: its rank"));
  CHECK_FALSE(Has(hang.text, "mismatch at"));
  CHECK_FALSE(Has(hang.text, "Without a ledger"));
  CHECK_FALSE(Has(hang.err, "hccl_tracer_ledger"));  // read as a ledger, not skipped as a trace file

  INFO(hang.json);
  CHECK(Has(hang.json, "\"communicators\":[{\"name\":\"hccl_world_group\",\"name_cut\":false,\"size\":8,"));
  CHECK(Has(hang.json, "\"classes\":[{\"ranks\":[5],\"ranges\":\"5\",\"last_enqueued\":3,\"last_completed\":null,"
                       "\"op\":\"AllReduce\",\"count\":3072,\"dtype\":\"fp16\",\"reduce\":\"sum\",\"root\":null,"));
  CHECK(Has(hang.json, "{\"ranks\":[0,1,2,3,4,6,7],\"ranges\":\"0-4,6-7\",\"last_enqueued\":4,\"last_completed\":null,"
                       "\"op\":\"AllReduce\",\"count\":4096,"));
  CHECK(Has(hang.json, "\"missing\":[],"));
  CHECK(Has(hang.json, "\"mismatches\":[]"));
  CHECK(Has(hang.json, "\"collective_culprits\":[5],\"ranks_without_ledger\":[]"));
}

TEST_CASE("hang over the bundles of two daemons: rank 3 made AllReduce #3 with another count, flagged as a mismatch at #3",
          "[hang][hccl]") {
  EightRanks job;
  std::vector<RankProcess*> ranks;
  // Every rank makes four AllReduces (1 Ki .. 4 Ki elements); rank 3 makes #3 with 5000.
  // The double meets them by sequence number alone, as HCCL does without inconsistent_check.
  for (int r = 0; r < 8; ++r) {
    ranks.push_back(&job.Start(r, 4, r == 3 ? std::vector<std::string>{"HCCL_RANK_COUNT_AT=3:5000"}
                                            : std::vector<std::string>{}));
  }
  for (RankProcess* r : ranks) REQUIRE(r->WaitForLine("finished"));
  const auto hang = EightRanks::Hang(job.Bundles());
  INFO(hang.text);
  CHECK(hang.text.rfind("Collectives (each rank's ledger of HCCL calls):\n"
                        "No communicator has ranks at different calls.\n"
                        "  comm hccl_world_group (size 8)",
                        0) == 0);
  CHECK(Has(hang.text, "    ranks 0-7 (8): last entered #4 AllReduce (4 Ki fp16, sum)"));
  CHECK(Has(hang.text, "    mismatch at #3, count: ranks 0-2,4-7 called 3072; rank 3 called 5000\n"));
  // One mismatch only: the op, the dtype and the reduce op agree, and #1, #2 and #4 agree.
  CHECK(hang.text.find("mismatch at") == hang.text.rfind("mismatch at"));

  INFO(hang.json);
  CHECK(Has(hang.json, "\"mismatches\":[{\"seq\":3,\"field\":\"count\",\"ranks\":[3],\"values\":["
                       "{\"value\":\"3072\",\"ranks\":[0,1,2,4,5,6,7]},{\"value\":\"5000\",\"ranks\":[3]}],"
                       "\"source\":\"ledger\"}],"
                       "\"mismatches_more\":0"));
  CHECK(Has(hang.json, "\"collective_culprits\":[],"));
}

TEST_CASE("hang over the bundles of two daemons: rank 5 skipped an AllReduce of its pair, the pair is named stuck and "
          "the world group waits on it",
          "[hang][hccl]") {
  EightRanks job;
  std::vector<RankProcess*> ranks;
  // Tensor-parallel pairs tp_0_1 .. tp_6_7 beside the world group: before each world
  // AllReduce #i, one in the pair. Rank 5 leaves out its pair's #3: rank 4 waits in tp_4_5
  // #3 and never reaches the world's #3, where the seven others wait.
  for (int r = 0; r < 8; ++r) {
    const int first = r / 2 * 2;
    ranks.push_back(&job.Start(
        r, 3,
        {"ATRACE_HCCL_DOUBLE_COMM=tp_" + std::to_string(first) + "_" + std::to_string(first + 1),
         "HCCL_RANK_PAIR=" + std::to_string(r % 2) + ":" + (r == 5 ? "3" : "0")}));
  }
  REQUIRE(ranks[4]->WaitForLine("pair enter 3"));
  REQUIRE(Eventually([&] { return job.Entered("tp_4_5", 0) == 3; }));
  for (int r = 0; r < 8; ++r) {
    if (r == 4) continue;
    REQUIRE(ranks[static_cast<size_t>(r)]->WaitForLine("enter 3"));
    REQUIRE(Eventually([&] { return job.Entered("hccl_world_group", r) == 3; }));
  }
  const auto hang = EightRanks::Hang(job.Bundles());
  INFO(hang.text);
  CHECK(hang.text.rfind("Collectives (each rank's ledger of HCCL calls):\n"
                        "Behind: rank 5 in comm tp_4_5 (last entered #2, where rank 4 entered #3); "
                        "waiting on it: comm hccl_world_group\n"
                        "  comm tp_4_5 (size 2): stuck here (enqueues only: completion not tracked on every rank)\n"
                        "    rank 5 (1): last entered #2 AllReduce (1 Ki fp16, sum)  [stack S1]\n"
                        "    rank 4 (1): last entered #3 AllReduce (1536 fp16, sum)  [stack S1]\n"
                        "  comm hccl_world_group (size 8): waits on comm tp_4_5 (enqueues only: completion not tracked "
                        "on every rank)\n"
                        "    rank 4 (1): last entered #2 AllReduce (2 Ki fp16, sum)  [stack S1]\n"
                        "    ranks 0-3,5-7 (7): last entered #3 AllReduce (3 Ki fp16, sum)  [stack S1]\n",
                        0) == 0);
  // Every rank's main thread waits in the same frame (stack class S1): only the ledgers tell
  // the pair from the world group. The other pairs met at #3 and follow, by name.
  for (const char* pair : {"tp_0_1", "tp_2_3", "tp_6_7"}) {
    CHECK(Has(hang.text, std::string("  comm ") + pair + " (size 2) (enqueues only"));
  }
  CHECK(hang.text.find("comm tp_0_1 (size 2)") < hang.text.find("comm tp_6_7 (size 2)"));
  CHECK_FALSE(Has(hang.text, "mismatch at"));
  CHECK_FALSE(Has(hang.text, "missing: its rank"));

  INFO(hang.json);
  CHECK(Has(hang.json, "\"communicators\":[{\"name\":\"tp_4_5\",\"name_cut\":false,\"size\":2,\"size_claimed\":2,"
                       "\"size_bounded\":false,\"stuck\":true,\"waits_on\":null,"));
  CHECK(Has(hang.json, "{\"name\":\"hccl_world_group\",\"name_cut\":false,\"size\":8,\"size_claimed\":8,"
                       "\"size_bounded\":false,\"stuck\":false,\"waits_on\":\"tp_4_5\","));
  CHECK(Has(hang.json, "\"classes\":[{\"ranks\":[4],\"ranges\":\"4\",\"last_enqueued\":2,"));
  CHECK(Has(hang.json, "\"collective_culprits\":[5],"));
}

TEST_CASE("hang over the bundles of two daemons: ranks 6 and 7 without a ledger are read from HCCL's own atrace records, "
          "rank 7 named behind by HCCL's record index, its hostile records skipped and counted",
          "[hang][hccl]") {
  EightRanks job;
  std::vector<RankProcess*> ranks;
  // Ranks 0-5 under libatrace_hccl make four AllReduces. Ranks 6 and 7 run without it: their
  // libhccl writes HCCL's records (an entry and a success record per call, indices 0, 1, 2,
  // ...). Rank 7 makes three and first writes five records that do not read.
  for (int r = 0; r < 8; ++r) {
    const bool ledger = r < 6;
    std::vector<std::string> env;
    if (r == 7) env.push_back("ATRACE_HCCL_DOUBLE_TRACE_GARBAGE=1");
    ranks.push_back(&job.Start(r, r == 7 ? 3 : 4, env, ledger));
  }
  REQUIRE(ranks[7]->WaitForLine("finished"));
  for (int r = 0; r < 7; ++r) {
    REQUIRE(ranks[static_cast<size_t>(r)]->WaitForLine("enter 4"));
    REQUIRE(Eventually([&] { return job.Entered("hccl_world_group", r) == 4; }));
  }
  const auto hang = EightRanks::Hang(job.Bundles());
  INFO(hang.text);
  // Rank 7's last entry is its third call's (index 4), rank 6's its fourth (index 6). The
  // ledger ranks at #4 are not compared with HCCL's index.
  CHECK(hang.text.rfind("Collectives (each rank's ledger of HCCL calls):\n"
                        "Behind: rank 7 in comm hccl_world_group (last entered #4, where rank 6 entered #6; from "
                        "HCCL's own records, # is HCCL's record index)\n",
                        0) == 0);
  CHECK(Has(hang.text, "    ranks 0-5 (6): last entered #4 AllReduce (4 Ki fp16, sum)"));
  CHECK(Has(hang.text, "    rank 7 (1): last entered #4 AllReduce (3 Ki fp16, sum), from HCCL's own records"));
  CHECK(Has(hang.text, "    rank 6 (1): last entered #6 AllReduce (4 Ki fp16, sum), from HCCL's own records"));
  CHECK(Has(hang.text, "  From HCCL's own atrace records, without a ledger: ranks 6-7 (# is HCCL's record index, an "
                       "entry and a success record per call: compared among these ranks only); 5 record(s) that did "
                       "not read were skipped\n"));
  CHECK_FALSE(Has(hang.text, "Without a ledger"));
  CHECK_FALSE(Has(hang.text, "missing: its rank"));  // HCCL's entries say each rank's localRank
  CHECK_FALSE(Has(hang.text, "mismatch at"));
  CHECK_FALSE(Has(hang.text, "\x1b"));  // a hostile record's escape is neither read as a name nor shown raw

  INFO(hang.json);
  CHECK(Has(hang.json, "{\"ranks\":[7],\"ranges\":\"7\",\"last_enqueued\":4,\"last_completed\":null,"
                       "\"op\":\"AllReduce\",\"count\":3072,"));
  CHECK(Has(hang.json, "\"source\":\"hccl_records\"}"));
  CHECK(Has(hang.json, "\"source\":\"ledger\"}"));
  CHECK(Has(hang.json, "\"collective_culprits\":[7],\"ranks_without_ledger\":[]"));
  CHECK(Has(hang.json, "\"ranks_from_hccl_records\":[6,7],\"hccl_records_skipped\":5,"));
}
