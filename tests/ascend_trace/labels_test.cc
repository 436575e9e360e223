// libascend_trace sends the job, rank and world size of its environment (LABELS) once the
// daemon grants ATR_FEATURE_LABELS: the directories the daemon makes for the process, here
// the report of its death without GOODBYE, carry them in the order log.
#include <catch2/catch.hpp>

#include <string>

#include "crash_util.h"
#include "support/temp_dir.h"

using namespace crash_test;

TEST_CASE("labels: a CANN-API process's RANK_ID, RANK_SIZE and ATRACE_JOB label the directories made for it",
          "[labels]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "exit3", 2, {"ATRACE_JOB=J1", "SLURM_JOB_ID=77", "RANK_ID=4", "RANK=9", "RANK_SIZE=6"});
  RequireExited(child, 3);
  REQUIRE(d.WaitForLog("labels: job 'J1' rank '4' world size '6'"));
  // The death report is written once the daemon sees the connection go: poll the log.
  std::string log;
  for (int i = 0; i < 600 && log.find(" job=J1 rank=4 world=6\n") == std::string::npos; ++i) {
    log = atraced::testing::ReadFile(d.trace_dir() + "/.atraced_order");
    if (log.find(" job=J1 rank=4 world=6\n") == std::string::npos) ::usleep(50000);
  }
  CHECK(log.find(" job=J1 rank=4 world=6\n") != std::string::npos);
}
