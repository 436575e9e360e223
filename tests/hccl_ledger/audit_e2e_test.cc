// libatrace_hccl_audit (LD_AUDIT=) beside LD_PRELOAD=libatrace_hccl.so, against the real
// daemon: the calls a framework looks up on libhccl's own handle (torch_npu's loaders, ctypes)
// or makes from a plugin opened RTLD_DEEPBIND (MindSpore's) are recorded, once each; without
// LD_AUDIT they are not (docs/HCCL_LEDGER.md, "How frameworks reach HCCL").
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

#include "exported_function.h"
#include "ledger_job.h"
#include "rank_process.h"

using atraced::proto::LedgerSnapshot;
using hccl_ledger_test::CheckCalls;
using hccl_ledger_test::Job;
using hccl_ledger_test::PythonRuns;
using hccl_ledger_test::RankProcess;
using hccl_ledger_test::SavedLedgers;

namespace {

// The ledger a Python rank saved at its clean exit, after it printed `last_line`.
LedgerSnapshot RunPython(Job& job, const std::vector<std::string>& argv, std::vector<std::string> env,
                         const std::string& last_line, const std::string& expected_output) {
  env.push_back("ATRACED_SOCKET=" + job.daemon.socket());
  env.push_back("ATRACE_HCCL_DOUBLE_DIR=" + job.meeting.path());
  RankProcess py(argv, env);
  REQUIRE(py.WaitForLine(last_line));
  const int status = py.Wait();
  INFO(py.output());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(py.output() == expected_output);  // every call reached the double
  const auto saved = SavedLedgers(job.daemon.trace_dir(), "exit", py.pid());
  REQUIRE(saved.size() == 1);
  return job.Ledger(saved[0]);
}

std::vector<uint64_t> Counts(const LedgerSnapshot& snap) {
  std::vector<uint64_t> counts;
  for (const auto& r : snap.records) counts.push_back(r.count);
  return counts;
}

// Sequence numbers 1..n, in the order of the records: each call numbered once.
void CheckConsecutive(const LedgerSnapshot& snap) {
  for (size_t i = 0; i < snap.records.size(); ++i) {
    CHECK(snap.records[i].comm == "hccl_world_group");
    CHECK(snap.records[i].comm_seq == i + 1);
  }
}

}  // namespace

TEST_CASE("hccl audit: with LD_AUDIT, calls looked up on libhccl's own handle are recorded, each once, numbered with "
          "those through the global scope") {
  if (!PythonRuns()) return;
  Job job;
  const LedgerSnapshot snap =
      RunPython(job, {"/usr/bin/python3", ATRACE_HCCL_PY_HANDLE_RANK, ATRACE_HCCL_DOUBLE},
                {"LD_PRELOAD=" ATRACE_HCCL_LIBRARY, "LD_AUDIT=" ATRACE_HCCL_AUDIT}, "global 0 0",
                "handle 0 0 0 0\nglobal 0 0\n");
  // Through the handle: AllReduce 111, Reduce 222, Scatter 333, AlltoAllV; then the two
  // through the global scope, bound to the interposer already and not a second time.
  REQUIRE(snap.records.size() == 6);
  CHECK(Counts(snap) == std::vector<uint64_t>{111, 222, 333, 0, 444, 555});
  const uint16_t ops[] = {ATR_LEDGER_OP_ALL_REDUCE, ATR_LEDGER_OP_REDUCE,    ATR_LEDGER_OP_SCATTER,
                          ATR_LEDGER_OP_ALL_TO_ALL_V, ATR_LEDGER_OP_ALL_REDUCE, ATR_LEDGER_OP_REDUCE};
  for (size_t i = 0; i < 6; ++i) CHECK(snap.records[i].op == ops[i]);
  CheckConsecutive(snap);
}

TEST_CASE("hccl audit: a plugin opened RTLD_DEEPBIND (MindSpore's way) is recorded with LD_AUDIT, and not without") {
  if (!PythonRuns()) return;
  const std::vector<std::string> argv{"/usr/bin/python3", ATRACE_HCCL_PY_PLUGIN_RANK, ATRACE_HCCL_FRAMEWORK};
  const std::string output = "plugin 0 0 0\nglobal 0\n";
  {
    INFO("LD_PRELOAD and LD_AUDIT");
    Job job;
    const LedgerSnapshot snap =
        RunPython(job, argv, {"LD_PRELOAD=" ATRACE_HCCL_LIBRARY, "LD_AUDIT=" ATRACE_HCCL_AUDIT}, "global 0", output);
    // 201, 203 looked up on the plugin's handle; 202 called by name inside the plugin (bound to
    // libhccl first, RTLD_DEEPBIND); 204 through the global scope.
    CHECK(Counts(snap) == std::vector<uint64_t>{201, 202, 203, 204});
    CheckConsecutive(snap);
  }
  {
    INFO("LD_PRELOAD alone");
    Job job;
    const LedgerSnapshot snap = RunPython(job, argv, {"LD_PRELOAD=" ATRACE_HCCL_LIBRARY}, "global 0", output);
    CHECK(Counts(snap) == std::vector<uint64_t>{204});  // only the global scope's call, as #1
    CheckConsecutive(snap);
  }
}

TEST_CASE("hccl audit: calls bound by name at link time are recorded once with LD_AUDIT, never twice") {
  Job job;
  auto r0 = job.Rank(0, 2, 4, false, false, true);
  auto r1 = job.Rank(1, 2, 4, false, false, true);
  uint32_t rank = 0;
  for (auto* r : {r0.get(), r1.get()}) {
    const int status = r->Wait();
    INFO(r->output());
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    const auto saved = SavedLedgers(job.daemon.trace_dir(), "exit", r->pid());
    REQUIRE(saved.size() == 1);
    CheckCalls(job.Ledger(saved[0]), rank++, 4);  // four records numbered 1..4, not eight
  }
}

TEST_CASE("hccl audit: LD_AUDIT without the interposer changes nothing: the calls reach HCCL, no ledger") {
  Job job;
  RankProcess p({ATRACE_HCCL_RANK, "0", "1", "3"},
                {"LD_AUDIT=" ATRACE_HCCL_AUDIT, "ATRACED_SOCKET=" + job.daemon.socket(),
                 "ATRACE_HCCL_DOUBLE_DIR=" + job.meeting.path()});
  const int status = p.Wait();
  INFO(p.output());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(SavedLedgers(job.daemon.trace_dir(), "exit", p.pid()).empty());
}

TEST_CASE("hccl audit: the module finds a loaded library's exported functions in its own tables, nothing else") {
  void* lib = ::dlopen(ATRACE_HCCL_DOUBLE, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  struct link_map* map = nullptr;
  REQUIRE(::dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0);
  for (const char* name : {"HcclAllReduce", "HcclGetRootInfo", "HcclCommInitRootInfo", "HcclBarrier"}) {
    INFO(name);
    void* expected = ::dlsym(lib, name);
    REQUIRE(expected != nullptr);
    CHECK(atrace_hccl_audit::ExportedFunction(map, name) == expected);
  }
  // Not defined there, an import of it (defined elsewhere), empty and near-miss names.
  for (const char* name : {"HcclNoSuchFunction", "dlsym", "", "HcclAllReduc", "HcclAllReduceX"}) {
    INFO(name);
    CHECK(atrace_hccl_audit::ExportedFunction(map, name) == nullptr);
  }
  CHECK(atrace_hccl_audit::ExportedFunction(nullptr, "HcclAllReduce") == nullptr);
  ::dlclose(lib);
}
