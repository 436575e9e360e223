// `atracectl dump --devices` against the real daemon, over a rank of a job (hccl_rank under
// libatrace_hccl): each dumped process's NPU and rank from its environment, `npu-smi info`
// and `hccn_tool -i N -link -g` run from the operator's PATH (stand-in scripts here), their
// output escaped and bounded; where they are not installed, the report says so; a device
// number the process made up is never handed to a tool.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "rank_process.h"
#include "support/daemon_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using atraced::testing::DaemonProcess;
using atraced::testing::Exists;
using atraced::testing::RunResult;
using hccl_ledger_test::RankProcess;

namespace {

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

struct Host {
  DaemonProcess daemon;
  atraced::testing::TempDir meeting, bin;  // the double's rendezvous; the stand-in tools' PATH

  Host() { REQUIRE(daemon.Start()); }

  // A one-rank job, held after one AllReduce, with `env` (its device and rank) added.
  std::unique_ptr<RankProcess> Rank(const std::vector<std::string>& env) {
    std::vector<std::string> all{"LD_PRELOAD=" ATRACE_HCCL_LIBRARY, "ATRACED_SOCKET=" + daemon.socket(),
                                 "ATRACE_HCCL_DOUBLE_DIR=" + meeting.path(), "ATRACE_QUIET=1"};
    all.insert(all.end(), env.begin(), env.end());
    auto r = std::make_unique<RankProcess>(std::vector<std::string>{ATRACE_HCCL_RANK, "0", "1", "1", "hold"}, all);
    REQUIRE(r->WaitForLine("finished"));
    return r;
  }

  // A stand-in for a host tool: a shell script named `name` in bin.
  void Tool(const std::string& name, const std::string& script) {
    const std::string path = bin / name;
    atraced::testing::WriteFile(path, "#!/bin/sh\n" + script);
    REQUIRE(::chmod(path.c_str(), 0755) == 0);
  }

  // `atracectl dump --devices [--json] PIDS` with PATH the stand-ins' directory only.
  RunResult Dump(const std::vector<pid_t>& pids, bool json) {
    std::vector<std::string> argv{ATRACECTL_BINARY, "--socket", daemon.socket(), "dump", "--devices"};
    if (json) argv.push_back("--json");
    for (pid_t p : pids) argv.push_back(std::to_string(p));
    atraced::testing::RunOptions o;
    o.env["PATH"] = bin.path();
    return atraced::testing::Run(argv, o);
  }
};

}  // namespace

TEST_CASE("dump --devices: each rank's NPU through ASCEND_RT_VISIBLE_DEVICES, npu-smi's health escaped and bounded, "
          "the device's link state", "[dump][devices]") {
  Host host;
  // npu-smi: a table row, a terminal escape, then 20 000 bytes on one line.
  host.Tool("npu-smi", "[ \"$*\" = info ] || exit 3\n"
                       "echo '| 5     910B3     | OK            | 95.1        37                0    / 0             |'\n"
                       "printf 'evil \\033]52;c;aGk=\\007 title\\n'\n"
                       "echo " + std::string(20000, 'x') + "\n");
  host.Tool("hccn_tool", "echo 'link status: UP'\necho \"args: $*\"\n");
  auto rank = host.Rank({"RANK_ID=3", "DEVICE_ID=1", "ASCEND_RT_VISIBLE_DEVICES=4,5"});

  const RunResult text = host.Dump({rank->pid()}, false);
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  const size_t blank = text.out.find("\n\n");
  REQUIRE(blank != std::string::npos);
  CHECK(text.out.find('\n') == blank);  // the dump's one path first, as without --devices
  CHECK(Has(text.out, "\n\nDevices (read by atracectl now; each process's device and rank are its environment's word):\n"
                      "  pid " + std::to_string(rank->pid()) +
                      " rank 3: device 5 (DEVICE_ID 1 through ASCEND_RT_VISIBLE_DEVICES 4,5)\n"
                      "npu-smi info:\n"
                      "    | 5     910B3     | OK "));
  CHECK(Has(text.out, "    evil \\x1b]52;c;aGk=\\x07 title\n"));
  CHECK_FALSE(Has(text.out, "\x1b"));
  CHECK(Has(text.out, "    ... (cut: only its first 16384 bytes are shown)\n"));
  CHECK(text.out.size() < 16384 + 1024);
  // The device number the process named, mapped, and nothing else of its environment.
  CHECK(Has(text.out, "hccn_tool -i 5 -link -g:\n    link status: UP\n    args: -i 5 -link -g\n"));

  const RunResult json = host.Dump({rank->pid()}, true);
  INFO(json.out);
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"omitted\":0,\"devices\":{\"processes\":[{\"pid\":" + std::to_string(rank->pid()) +
                          ",\"rank\":3,\"device\":5,\"source\":\"DEVICE_ID 1 through ASCEND_RT_VISIBLE_DEVICES 4,5\","
                          "\"unknown\":null}],\"npu_smi\":{\"command\":\"npu-smi info\",\"installed\":true,\"run\":true,"
                          "\"not_started\":null,\"exit\":0,\"timed_out\":false,\"output\":\"| 5 "));
  CHECK(Has(json.out, "evil \\u001b]52;c;aGk=\\u0007 title\\n"));
  CHECK(Has(json.out, "\"cut\":true},\"links\":[{\"device\":5,\"hccn_tool\":{\"command\":\"hccn_tool -i 5 -link -g\","
                      "\"installed\":true,\"run\":true,\"not_started\":null,\"exit\":0,\"timed_out\":false,"
                      "\"output\":\"link status: UP\\nargs: -i 5 -link -g\\n\",\"cut\":false}}]}}\n"));
}

TEST_CASE("dump --devices: without npu-smi and hccn_tool the report says they are not installed", "[dump][devices]") {
  Host host;  // an empty PATH directory
  auto rank = host.Rank({"RANK_ID=0", "ASCEND_DEVICE_ID=2"});
  const RunResult text = host.Dump({rank->pid()}, false);
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, " rank 0: device 2 (ASCEND_DEVICE_ID 2)\n"
                      "npu-smi not installed (no npu-smi in PATH): the NPUs' health is not read\n"
                      "hccn_tool not installed (no hccn_tool in PATH): the links' state is not read\n"));
  const RunResult json = host.Dump({rank->pid()}, true);
  INFO(json.out);
  REQUIRE(json.exit_code == 0);
  CHECK(Has(json.out, "\"npu_smi\":{\"command\":\"npu-smi info\",\"installed\":false,\"run\":false,"));
  CHECK(Has(json.out, "\"links\":[{\"device\":2,\"hccn_tool\":{\"command\":\"hccn_tool -i 2 -link -g\",\"installed\":false,"
                      "\"run\":false,"));
}

TEST_CASE("dump --devices: a device number the process made up reaches no tool, and a tool that hangs is killed at its timeout",
          "[dump][devices]") {
  Host host;
  host.Tool("npu-smi", "exec /bin/sleep 60\n");
  const std::string ran = host.bin / "hccn_tool_ran";
  host.Tool("hccn_tool", "echo \"$*\" >> " + ran + "\n");
  auto forged = host.Rank({"RANK_ID=1", "DEVICE_ID=5 -cfg /etc/shadow", "LOCAL_RANK=0"});
  auto none = host.Rank({"RANK=2"});
  const RunResult text = host.Dump({forged->pid(), none->pid()}, false);
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(Has(text.out, "  pid " + std::to_string(forged->pid()) +
                          " rank 1: device not known (DEVICE_ID is not a device number: '5 -cfg /etc/shadow')\n"));
  CHECK(Has(text.out, "  pid " + std::to_string(none->pid()) +
                          " rank 2: device not known (no DEVICE_ID, ASCEND_DEVICE_ID or LOCAL_RANK in its environment)\n"));
  CHECK(Has(text.out, "npu-smi info (killed after 5 s):\n"));
  CHECK(Has(text.out, "hccn_tool: not run (no process names its device)\n"));
  CHECK_FALSE(Exists(ran));
}
