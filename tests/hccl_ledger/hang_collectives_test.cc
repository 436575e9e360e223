// `atracectl hang` over a job of eight ranks on two daemons, as processes over the libhccl
// double with LD_PRELOAD=libatrace_hccl.so: rank 5 skips the last AllReduce, the other seven
// block in it (the double holds a collective until every rank entered it). After `dump
// --job` and `export --job` on each daemon, hang leads with the communicator: rank 5 behind
// at #3, ranks 0-4,6-7 at #4.
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
using hccl_ledger_test::Eventually;
using hccl_ledger_test::RankProcess;

namespace {

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// The sequence number rank `rank` entered in the double's rendezvous of hccl_world_group.
uint64_t Entered(const std::string& meeting, int rank) {
  const int fd = ::open((meeting + "/hccl_world_group.rdv").c_str(), O_RDONLY | O_CLOEXEC);
  uint64_t v = 0;
  if (fd >= 0) {
    if (::pread(fd, &v, sizeof v, rank * 8) != sizeof v) v = 0;
    ::close(fd);
  }
  return v;
}

}  // namespace

TEST_CASE("hang over the bundles of two daemons: rank 5 skipped an AllReduce, named behind at #3, the others at #4",
          "[hang][hccl]") {
  atraced::testing::TempDir tmp, meeting;
  std::vector<std::unique_ptr<DaemonProcess>> hosts;
  for (int h = 0; h < 2; ++h) {
    hosts.push_back(std::make_unique<DaemonProcess>());
    REQUIRE(hosts.back()->Start());
  }
  std::vector<std::unique_ptr<RankProcess>> ranks;
  for (int r = 0; r < 8; ++r) {
    // Rank 5 makes three AllReduces and waits; the others make four.
    const std::vector<std::string> argv{ATRACE_HCCL_RANK, std::to_string(r), "8", r == 5 ? "3" : "4", "hold"};
    const std::vector<std::string> env{"LD_PRELOAD=" ATRACE_HCCL_LIBRARY,
                                       "ATRACED_SOCKET=" + hosts[static_cast<size_t>(r / 4)]->socket(),
                                       "ATRACE_HCCL_DOUBLE_DIR=" + meeting.path(), "ATRACE_QUIET=1", "ATRACE_JOB=J1",
                                       "RANK_ID=" + std::to_string(r), "RANK_SIZE=8"};
    ranks.push_back(std::make_unique<RankProcess>(argv, env));
  }
  REQUIRE(ranks[5]->WaitForLine("finished"));
  for (int r = 0; r < 8; ++r) {
    if (r == 5) continue;
    REQUIRE(ranks[static_cast<size_t>(r)]->WaitForLine("enter 4"));
    // Inside the double's AllReduce #4: past libatrace_hccl's record of it.
    REQUIRE(Eventually([&] { return Entered(meeting.path(), r) == 4; }));
  }
  std::vector<std::string> bundles;
  for (int h = 0; h < 2; ++h) {
    const std::string socket = hosts[static_cast<size_t>(h)]->socket();
    auto dump = atraced::testing::Run({ATRACECTL_BINARY, "--socket", socket, "dump", "--job", "J1"});
    INFO(dump.err);
    REQUIRE(dump.exit_code == 0);
    bundles.push_back(tmp / ("host" + std::to_string(h) + ".tar.gz"));
    auto exported = atraced::testing::Run(
        {ATRACECTL_BINARY, "--socket", socket, "export", "--format", "tar", "--job", "J1", "-o", bundles.back()});
    INFO(exported.err);
    REQUIRE(exported.exit_code == 0);
  }
  auto hang = atraced::testing::Run({ATRACECTL_BINARY, "hang", bundles[0], bundles[1]});
  INFO(hang.out);
  INFO(hang.err);
  REQUIRE(hang.exit_code == 0);
  // The communicator leads the report.
  CHECK(hang.out.rfind("Collectives (each rank's ledger of HCCL calls):\n"
                       "Behind: rank 5 in comm hccl_world_group (last entered #3, where ranks 0-4,6-7 entered #4)\n",
                       0) == 0);
  CHECK(Has(hang.out, "    rank 5 (1): last entered #3 AllReduce (3 Ki fp16, sum)"));
  CHECK(Has(hang.out, "    ranks 0-4,6-7 (7): last entered #4 AllReduce (4 Ki fp16, sum)"));
  CHECK_FALSE(Has(hang.out, "missing: its rank"));
  CHECK_FALSE(Has(hang.out, "mismatch at"));
  CHECK_FALSE(Has(hang.out, "Without a ledger"));
  CHECK_FALSE(Has(hang.err, "hccl_tracer_ledger"));  // read as a ledger, not skipped as a trace file

  auto json = atraced::testing::Run({ATRACECTL_BINARY, "hang", "--json", bundles[0], bundles[1]});
  INFO(json.out);
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"communicators\":[{\"name\":\"hccl_world_group\",\"name_cut\":false,\"size\":8,"));
  CHECK(Has(json.out, "\"classes\":[{\"ranks\":[5],\"ranges\":\"5\",\"last_enqueued\":3,\"last_completed\":null,"
                      "\"op\":\"AllReduce\",\"count\":3072,\"dtype\":\"fp16\",\"reduce\":\"sum\",\"root\":null,"));
  CHECK(Has(json.out, "{\"ranks\":[0,1,2,3,4,6,7],\"ranges\":\"0-4,6-7\",\"last_enqueued\":4,\"last_completed\":null,"
                      "\"op\":\"AllReduce\",\"count\":4096,"));
  CHECK(Has(json.out, "\"missing\":[],"));
  CHECK(Has(json.out, "\"mismatches\":[]"));
  CHECK(Has(json.out, "\"collective_culprits\":[5],\"ranks_without_ledger\":[]"));
}
