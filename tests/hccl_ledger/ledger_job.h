// A test job of hccl_ledger_tests: the real daemon and the libhccl double's rendezvous
// directory, its ranks, their saved ledgers; and the checks the e2e tests share.
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "atraced/proto/ledger_reader.h"
#include "rank_process.h"
#include "support/daemon_process.h"
#include "support/temp_dir.h"

namespace hccl_ledger_test {

using atraced::proto::LedgerSnapshot;
using atraced::testing::DaemonProcess;

struct Job {
  DaemonProcess daemon;
  atraced::testing::TempDir meeting;  // the double's rendezvous files

  Job() { REQUIRE(daemon.Start()); }

  // `audit`: with LD_AUDIT=libatrace_hccl_audit.so beside LD_PRELOAD.
  std::unique_ptr<RankProcess> Rank(int rank, int size, int calls, bool hold, bool acl, bool audit = false) {
    std::vector<std::string> argv{ATRACE_HCCL_RANK, std::to_string(rank), std::to_string(size), std::to_string(calls)};
    if (hold) argv.push_back("hold");
    std::vector<std::string> env{"LD_PRELOAD=" ATRACE_HCCL_LIBRARY, "ATRACED_SOCKET=" + daemon.socket(),
                                 "ATRACE_HCCL_DOUBLE_DIR=" + meeting.path(), "RANK_ID=" + std::to_string(rank),
                                 "RANK_SIZE=" + std::to_string(size)};
    if (acl) env.push_back("HCCL_RANK_ACL_LIB=" ATRACE_ACL_DOUBLE);
    if (audit) env.push_back("LD_AUDIT=" ATRACE_HCCL_AUDIT);
    return std::make_unique<RankProcess>(argv, env);
  }

  // The sequence number rank `rank` entered in the double's rendezvous: it is inside the
  // collective (past libatrace_hccl's record) once this reads the call's number.
  uint64_t Entered(int rank) const {
    const int fd = ::open((meeting.path() + "/hccl_world_group.rdv").c_str(), O_RDONLY | O_CLOEXEC);
    uint64_t v = 0;
    if (fd >= 0) {
      if (::pread(fd, &v, sizeof v, rank * 8) != sizeof v) v = 0;
      ::close(fd);
    }
    return v;
  }

  LedgerSnapshot Ledger(const std::string& path) const {
    LedgerSnapshot snap;
    std::string why;
    REQUIRE(atraced::proto::ReadLedgerFile(path, &snap, &why));
    INFO(why);
    return snap;
  }
};

inline void CheckCalls(const LedgerSnapshot& snap, uint32_t rank, uint64_t calls) {
  REQUIRE(snap.header_valid);
  REQUIRE(snap.records.size() == calls);
  for (uint64_t i = 0; i < calls; ++i) {
    const auto& r = snap.records[i];
    CHECK(r.comm == "hccl_world_group");
    CHECK(r.comm_seq == i + 1);
    CHECK(r.op == ATR_LEDGER_OP_ALL_REDUCE);
    CHECK(r.count == 1024 * (i + 1));
    CHECK(r.data_type == 3);
    CHECK(r.reduce_op == 0);
    CHECK(r.stream == 0x5151);
    CHECK(r.rank_known);
    CHECK(r.rank == rank);
    CHECK(r.size == 2);
  }
}

// Whether a test may run python3 with libatrace_hccl in it (else it says why, and skips).
inline bool PythonRuns() {
  if (ATRACE_HCCL_INSTRUMENTED) {
    WARN("skipped: an instrumented library does not load into the uninstrumented python3");
    return false;
  }
  if (::access("/usr/bin/python3", X_OK) != 0) {
    WARN("skipped: no /usr/bin/python3 (Debian package python3)");
    return false;
  }
  return true;
}

}  // namespace hccl_ledger_test
