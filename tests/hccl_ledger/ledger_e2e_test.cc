// Ranks of a job as processes, over the libhccl and acl doubles with LD_PRELOAD=libatrace_hccl.so,
// against the real daemon: the ledger outlives a rank that is killed in a collective, and is
// saved at a clean exit, with completions where an acl runtime is loaded and without.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "atraced/proto/ledger_reader.h"
#include "ledger_job.h"
#include "rank_process.h"

using atraced::proto::LedgerSnapshot;
using hccl_ledger_test::CheckCalls;
using hccl_ledger_test::Eventually;
using hccl_ledger_test::Job;
using hccl_ledger_test::PythonRuns;
using hccl_ledger_test::RankProcess;
using hccl_ledger_test::SavedLedgers;

TEST_CASE("hccl ledger: a rank SIGKILLed inside a collective leaves its ledger in its death save, ending at the call it was in") {
  Job job;
  // Rank 1 makes two AllReduces and waits; rank 0 enters a third that rank 1 never joins.
  auto r0 = job.Rank(0, 2, 3, false, true);
  auto r1 = job.Rank(1, 2, 2, true, true);
  REQUIRE(r1->WaitForLine("finished"));
  REQUIRE(r0->WaitForLine("enter 3"));
  REQUIRE(Eventually([&] { return job.Entered(0) == 3; }));
  r0->Kill();
  std::vector<std::string> saved;
  REQUIRE(Eventually([&] { return !(saved = SavedLedgers(job.daemon.trace_dir(), "stackcore", r0->pid())).empty(); }));
  REQUIRE(saved.size() == 1);
  const LedgerSnapshot snap = job.Ledger(saved[0]);
  CheckCalls(snap, 0, 3);
  CHECK(snap.completion_tracked());
  // The call it died in was entered, and never completed.
  CHECK(snap.records[2].completion_tracked);
  CHECK_FALSE(snap.records[2].completion_ns.has_value());
  // The rank still alive: its ledger, dumped from outside, shows it done with #2; the
  // completions arrive as the library's thread polls the events.
  REQUIRE(Eventually([&] {
    const std::string cmd = std::string(ATRACECTL_BINARY) + " --socket " + job.daemon.socket() + " dump " +
                            std::to_string(r1->pid()) + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return false;
    const auto dumps = SavedLedgers(job.daemon.trace_dir(), "schedule", r1->pid());
    if (dumps.empty()) return false;
    const LedgerSnapshot s = job.Ledger(dumps.back());
    return s.records.size() == 2 && s.records[0].completion_ns && s.records[1].completion_ns;
  }));
  const auto dumps = SavedLedgers(job.daemon.trace_dir(), "schedule", r1->pid());
  const LedgerSnapshot live = job.Ledger(dumps.back());
  CheckCalls(live, 1, 2);
  CHECK(*live.records[0].completion_ns >= live.records[0].enqueue_ns);
}

TEST_CASE("hccl ledger: without an acl runtime the ledger holds enqueues only and says so, and a clean exit saves it") {
  Job job;
  auto r0 = job.Rank(0, 2, 4, false, false);
  auto r1 = job.Rank(1, 2, 4, false, false);
  for (auto* r : {r0.get(), r1.get()}) {
    const int status = r->Wait();
    INFO(r->output());
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  uint32_t rank = 0;
  for (auto* r : {r0.get(), r1.get()}) {
    const auto saved = SavedLedgers(job.daemon.trace_dir(), "exit", r->pid());
    REQUIRE(saved.size() == 1);
    const LedgerSnapshot snap = job.Ledger(saved[0]);
    CheckCalls(snap, rank++, 4);
    CHECK_FALSE(snap.completion_tracked());
    for (const auto& rec : snap.records) CHECK_FALSE(rec.completion_tracked);
  }
}

TEST_CASE("hccl ledger: a process that inherits LD_PRELOAD and never calls HCCL gets no ledger") {
  Job job;
  // hccl_rank without its arguments returns 2 before any HCCL call (an instrumented program:
  // the sanitizer trees' interposer loads into no other).
  RankProcess p({ATRACE_HCCL_RANK}, {"LD_PRELOAD=" ATRACE_HCCL_LIBRARY, "ATRACED_SOCKET=" + job.daemon.socket()});
  const int status = p.Wait();
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 2);
  // No process directory of it: trace_{pgid}_{pid}_{time}.
  std::error_code ec;
  const std::string mark = "_" + std::to_string(p.pid()) + "_";
  for (const auto& entry : std::filesystem::directory_iterator(job.daemon.trace_dir(), ec)) {
    CHECK(entry.path().filename().string().find(mark) == std::string::npos);
  }
}

namespace {

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

}  // namespace

TEST_CASE("hccl ledger: show and info decode a saved ledger, a hostile communicator name escaped and kept to its process") {
  Job job;
  // A one-rank communicator whose name carries a terminal escape and a newline forging a line.
  const std::string evil = "evil\x1b]52;c;aGk=\x07\nrank 9 of 9: entered #99";
  std::vector<std::string> env{"LD_PRELOAD=" ATRACE_HCCL_LIBRARY, "ATRACED_SOCKET=" + job.daemon.socket(),
                               "ATRACE_HCCL_DOUBLE_DIR=" + job.meeting.path(), "ATRACE_HCCL_DOUBLE_COMM=" + evil,
                               "HCCL_RANK_ACL_LIB=" ATRACE_ACL_DOUBLE};
  RankProcess lone({ATRACE_HCCL_RANK, "0", "1", "2"}, env);
  REQUIRE(lone.Wait() == 0);
  auto other = job.Rank(0, 1, 1, false, false);  // another process, its own world group
  REQUIRE(other->Wait() == 0);
  const auto saved = SavedLedgers(job.daemon.trace_dir(), "exit", lone.pid());
  REQUIRE(saved.size() == 1);
  const std::string ctl = std::string(ATRACECTL_BINARY) + " --socket " + job.daemon.socket();

  const std::string dir = std::filesystem::path(saved[0]).parent_path().string();
  const std::string shown = Run(ctl + " show " + dir);
  INFO(shown);
  CHECK(shown.find("collective ledger: 2 call(s) of 2 made; completion tracked") != std::string::npos);
  CHECK(shown.find("rank 0/1 #2 AllReduce 2048 fp16 sum stream 0x5151") != std::string::npos);
  CHECK(shown.find('\x1b') == std::string::npos);
  CHECK(shown.find('\x07') == std::string::npos);
  CHECK(shown.find("\nrank 9 of 9") == std::string::npos);
  CHECK(shown.find("evil\\x1b]52;c;aGk=\\x07\\x0arank 9 of 9: entered #99") != std::string::npos);

  const std::string info = Run(ctl + " info " + std::to_string(lone.pid()));
  INFO(info);
  CHECK(info.find("Collectives:") != std::string::npos);
  CHECK(info.find("rank 0/1: entered #2 AllReduce 2048 fp16 sum") != std::string::npos);
  CHECK(info.find('\x1b') == std::string::npos);
  CHECK(info.find("\nrank 9 of 9") == std::string::npos);
  const std::string json = Run(ctl + " info --json " + std::to_string(lone.pid()));
  INFO(json);
  CHECK(json.find("\"collectives\":{\"seq\":") != std::string::npos);
  CHECK(json.find("\"completion_tracked\":true") != std::string::npos);
  CHECK(json.find("\"rank\":0,\"size\":1,\"calls\":2,\"last_entered\":{\"seq\":2,\"op\":\"AllReduce\",\"count\":2048,"
                  "\"dtype\":\"fp16\",\"reduce\":\"sum\",\"peer\":null},\"last_completed\":") != std::string::npos);
  CHECK(json.find("evil\\u001b]52;c;aGk=\\u0007\\nrank 9 of 9") != std::string::npos);  // JSON-escaped
  const std::string other_info = Run(ctl + " info " + std::to_string(other->pid()));
  INFO(other_info);
  CHECK(other_info.find("comm hccl_world_group rank 0/1: entered #1 AllReduce 1024 fp16 sum") != std::string::npos);
  CHECK(other_info.find("evil") == std::string::npos);
}

TEST_CASE("hccl ledger: Python loads the interposer and HCCL with ctypes, calls from threads, and forks") {
  if (!PythonRuns()) return;
  Job job;
  RankProcess py({"/usr/bin/python3", ATRACE_HCCL_PY_RANK, ATRACE_HCCL_LIBRARY, ATRACE_HCCL_DOUBLE},
                 {"ATRACED_SOCKET=" + job.daemon.socket(), "ATRACE_HCCL_DOUBLE_DIR=" + job.meeting.path()});
  REQUIRE(py.WaitForLine("parent done"));
  const int status = py.Wait();
  INFO(py.output());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const size_t at = py.output().find("child ");
  REQUIRE(at != std::string::npos);
  const pid_t child = static_cast<pid_t>(std::stol(py.output().substr(at + 6)));

  // The parent: the hundred calls of its four threads, each its own sequence number; none of
  // the five made through libhccl's own handle (docs/HCCL_LEDGER.md, what is not reached).
  const auto parent = SavedLedgers(job.daemon.trace_dir(), "exit", py.pid());
  REQUIRE(parent.size() == 1);
  const LedgerSnapshot p = job.Ledger(parent[0]);
  REQUIRE(p.records.size() == 100);
  std::set<uint64_t> seqs, counts;
  for (const auto& r : p.records) {
    seqs.insert(r.comm_seq);
    counts.insert(r.count);
    CHECK(r.comm == "hccl_world_group");
    CHECK(r.rank_known);
    CHECK(r.size == 1);
  }
  CHECK(seqs.size() == 100);
  CHECK(*seqs.rbegin() == 100);
  CHECK(counts.size() == 100);
  CHECK(counts.count(777) == 0);
  // The child: its own ledger, its own count from 1, nothing written into its parent's.
  const auto forked = SavedLedgers(job.daemon.trace_dir(), "exit", child);
  REQUIRE(forked.size() == 1);
  const LedgerSnapshot c = job.Ledger(forked[0]);
  REQUIRE(c.records.size() == 10);
  for (uint64_t i = 0; i < 10; ++i) {
    CHECK(c.records[i].comm_seq == i + 1);
    CHECK(c.records[i].count == 5001 + i);
  }
}

TEST_CASE("hccl ledger: under LD_PRELOAD, calls looked up on libhccl's own handle are not recorded, those through the "
          "global scope are") {
  if (!PythonRuns()) return;
  Job job;
  // torch_npu's loaders' way: dlopen libhccl, dlsym each name on that handle (ctypes.CDLL).
  RankProcess py({"/usr/bin/python3", ATRACE_HCCL_PY_HANDLE_RANK, ATRACE_HCCL_DOUBLE},
                 {"LD_PRELOAD=" ATRACE_HCCL_LIBRARY, "ATRACED_SOCKET=" + job.daemon.socket(),
                  "ATRACE_HCCL_DOUBLE_DIR=" + job.meeting.path()});
  REQUIRE(py.WaitForLine("global 0 0"));
  const int status = py.Wait();
  INFO(py.output());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(py.output() == "handle 0 0 0 0\nglobal 0 0\n");  // every call reached the double
  const auto saved = SavedLedgers(job.daemon.trace_dir(), "exit", py.pid());
  REQUIRE(saved.size() == 1);
  const LedgerSnapshot snap = job.Ledger(saved[0]);
  // The two calls through the global scope, numbered 1 and 2: the four through the handle
  // (AllReduce, Reduce, Scatter, AlltoAllV) are neither recorded nor counted.
  REQUIRE(snap.records.size() == 2);
  CHECK(snap.records[0].op == ATR_LEDGER_OP_ALL_REDUCE);
  CHECK(snap.records[0].count == 444);
  CHECK(snap.records[0].comm_seq == 1);
  CHECK(snap.records[1].op == ATR_LEDGER_OP_REDUCE);
  CHECK(snap.records[1].count == 555);
  CHECK(snap.records[1].comm_seq == 2);
  REQUIRE(snap.records[1].peer.has_value());
  CHECK(*snap.records[1].peer == 0);
  for (const auto& r : snap.records) CHECK(r.comm == "hccl_world_group");
}

TEST_CASE("hccl ledger: Python loads the interposer with ctypes beside a framework linked with libhccl, and the "
          "order decides what is recorded") {
  if (!PythonRuns()) return;
  // The framework's three AllReduces (101..103) are bound when ctypes loads it (RTLD_NOW): to
  // the interposer only if it is in the global scope by then. The call through the
  // interposer's own handle (900) is recorded in every order (docs/HCCL_LEDGER.md).
  // With LD_AUDIT=libatrace_hccl_audit.so as well, a binding to libhccl made once the
  // interposer is loaded, in either scope, goes to the interposer.
  struct Case {
    std::string order;
    bool audit;
    std::vector<uint64_t> recorded;
  };
  const Case cases[] = {
      {"interposer-global-first", false, {101, 102, 103, 900}},
      {"framework-first", false, {900}},
      {"interposer-local-first", false, {900}},
      {"interposer-global-first", true, {101, 102, 103, 900}},
      {"framework-first", true, {900}},
      {"interposer-local-first", true, {101, 102, 103, 900}},
  };
  for (const auto& [order, audit, recorded] : cases) {
    INFO(order << (audit ? " with LD_AUDIT" : ""));
    Job job;
    std::vector<std::string> env{"ATRACED_SOCKET=" + job.daemon.socket(), "ATRACE_HCCL_DOUBLE_DIR=" + job.meeting.path()};
    if (audit) env.push_back("LD_AUDIT=" ATRACE_HCCL_AUDIT);
    RankProcess py({"/usr/bin/python3", ATRACE_HCCL_PY_ORDER_RANK, order, ATRACE_HCCL_LIBRARY, ATRACE_HCCL_FRAMEWORK},
                   env);
    REQUIRE(py.WaitForLine("interposer 0"));
    const int status = py.Wait();
    INFO(py.output());
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    CHECK(py.output() == "framework 0 0 0\ninterposer 0\n");  // every call reached the double
    const auto saved = SavedLedgers(job.daemon.trace_dir(), "exit", py.pid());
    REQUIRE(saved.size() == 1);
    const LedgerSnapshot snap = job.Ledger(saved[0]);
    std::vector<uint64_t> counts, seqs, expected_seqs;
    for (const auto& r : snap.records) {
      counts.push_back(r.count);
      seqs.push_back(r.comm_seq);
      CHECK(r.op == ATR_LEDGER_OP_ALL_REDUCE);
      CHECK(r.comm == "hccl_world_group");
    }
    for (uint64_t i = 1; i <= recorded.size(); ++i) expected_seqs.push_back(i);
    CHECK(counts == recorded);
    CHECK(seqs == expected_seqs);  // unrecorded calls are not counted either
  }
}
