// CANN's on-demand stack dump as asys collects it (asys collect -r=stacktrace --remote PID
// --all), against the real daemon: sigqueue(PID, 35, 0xAABB0003); find
// $ASCEND_WORK_PATH/atrace/trace_*/stackcore_event_{PID}_*/stackcore_tracer_35_{PID}_*.bin,
// ASCEND_WORK_PATH read from /proc/PID/environ as asys reads it; call AtraceStackcoreParse
// from the libascend_trace.so it dlopens; the .txt beside it has the sections asys analyze
// symbolizes. The process runs on. Other values of 35 keep the schedule dump.
#include <dlfcn.h>
#include <glob.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "atrace_stackcore_api.h"
#include "atraced/proto/stack_dump_file.h"
#include "crash_util.h"
#include "dump_signal.h"
#include "support/asys_stackcore.h"

using namespace crash_test;

namespace {

// What asys reads of the target: ASCEND_WORK_PATH in /proc/PID/environ, else $HOME/ascend.
std::string AsysTraceRoot(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  const std::string env = all.str();
  for (size_t at = 0; at < env.size(); at = env.find('\0', at) + 1) {
    const std::string entry = env.substr(at, env.find('\0', at) - at);
    if (entry.rfind("ASCEND_WORK_PATH=", 0) == 0) return entry.substr(17) + "/atrace";
    if (env.find('\0', at) == std::string::npos) break;
  }
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/ascend/atrace";
}

// asys's wait: the .bin files of pid's stack dumps under `root`, by its glob.
std::vector<std::string> AsysBins(const std::string& root, pid_t pid) {
  const std::string pattern = root + "/trace_*/stackcore_event_" + std::to_string(pid) + "_*/stackcore_tracer_35_" +
                              std::to_string(pid) + "_*.bin";
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

std::vector<std::string> AwaitBins(const std::string& root, pid_t pid, size_t count) {
  for (int i = 0; i < 200; ++i) {
    auto bins = AsysBins(root, pid);
    if (bins.size() >= count) return bins;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return AsysBins(root, pid);
}

bool Queue35(pid_t pid, uint32_t value) {
  sigval v{};
  v.sival_int = static_cast<int>(value);
  return ::sigqueue(pid, ascend_trace::kDumpSignal, v) == 0;
}

using ParseFn = int (*)(const char*, uint32_t);

// AtraceStackcoreParse as asys gets it: dlsym from the library it dlopens.
ParseFn DlopenParse() {
  void* lib = ::dlopen(ASCEND_TRACE_LIBRARY, RTLD_NOW);
  REQUIRE(lib != nullptr);
  return reinterpret_cast<ParseFn>(::dlsym(lib, "AtraceStackcoreParse"));
}

bool StillRunning(const Child& child) {
  int status = 0;
  return ::waitpid(child.pid, &status, WNOHANG) == 0;
}

}  // namespace

TEST_CASE("stack dump: 35 queued with 0xAABB0003 leaves the .bin asys waits for, parsed to a [stack] report, and the "
          "process runs on", "[crash][dump][asys]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  // How an operator makes asys and the daemon meet: the process's ASCEND_WORK_PATH names the
  // daemon's root (docs/ASCEND_TRACE.md).
  Child child(d, "dump-on-input", 5, {"ASCEND_WORK_PATH=" + d.root()});
  const std::string root = AsysTraceRoot(child.pid);
  CHECK(root == d.trace_dir());
  REQUIRE(Queue35(child.pid, ascend_trace::kStackDumpAllThreads));
  const auto bins = AwaitBins(root, child.pid, 1);
  REQUIRE(bins.size() == 1);
  REQUIRE(d.WaitForLog("asked for its stacks"));
  const std::string dir = bins[0].substr(0, bins[0].rfind('/'));
  // The process's live rings beside the stacks; no schedule dir, and it is still running.
  CHECK(Records(dir + "/schedule_tracer_crash_obj.txt") == Expected(0, 5));
  CHECK(DirsOf(d, "schedule", child.pid).empty());
  REQUIRE(StillRunning(child));

  const ParseFn parse = DlopenParse();
  REQUIRE(parse != nullptr);
  const std::string txt = bins[0].substr(0, bins[0].size() - 4) + ".txt";
  const std::string written_by_daemon = ReadFile(txt);
  CHECK(parse(bins[0].c_str(), static_cast<uint32_t>(bins[0].size())) == 0);
  ::unlink(txt.c_str());  // parsed again where the daemon's text is gone
  CHECK(parse(bins[0].c_str(), static_cast<uint32_t>(bins[0].size())) == 0);
  const std::string report = ReadFile(txt);
  CHECK(report == written_by_daemon);
  INFO(report);
  CHECK(report.find("asked for its stacks; it runs on\n") != std::string::npos);
  CHECK(report.find("\n[process]\ncrash reason:35\ncrash pid:" + std::to_string(child.pid) + "\n") != std::string::npos);
  CHECK(report.find("\n[stack]\n") != std::string::npos);
  CHECK(report.find("Thread 1 (" + std::to_string(child.pid) + ", ") != std::string::npos);
  CHECK(report.find(" main+0x") != std::string::npos);
  const auto asys = atraced::testing::ParseAsAsys(report);
  INFO(asys.problems.size() << " problem(s), first: " << (asys.problems.empty() ? "" : asys.problems[0]));
  CHECK(asys.problems.empty());
  REQUIRE(!asys.frames.empty());

  REQUIRE(::write(child.input, "x", 1) == 1);  // records 5..9, then a normal exit
  RequireExited(child, 0);
  CHECK(DirsOf(d, "exit", child.pid).size() == 1);
}

TEST_CASE("stack dump: other values of 35 keep the schedule dump, and a second stack dump is another dir",
          "[crash][dump][asys]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  Child child(d, "dump-on-input", 3, {"ASCEND_WORK_PATH=" + d.root()});
  REQUIRE(Queue35(child.pid, 7));
  REQUIRE(d.WaitForLog("caught dump signal 35"));
  CHECK(DirsOf(d, "schedule", child.pid).size() == 1);
  CHECK(AsysBins(d.trace_dir(), child.pid).empty());
  REQUIRE(Queue35(child.pid, ascend_trace::kStackDumpOneThread));
  REQUIRE(AwaitBins(d.trace_dir(), child.pid, 1).size() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // another 20-digit time
  REQUIRE(Queue35(child.pid, ascend_trace::kStackDumpAllThreads));
  CHECK(AwaitBins(d.trace_dir(), child.pid, 2).size() == 2);
  REQUIRE(StillRunning(child));
  REQUIRE(::write(child.input, "x", 1) == 1);
  RequireExited(child, 0);
}

TEST_CASE("stack dump: AtraceStackcoreParse refuses what is not a stack dump, with the reason", "[dump][asys]") {
  atraced::testing::TempDir tmp;
  const ParseFn parse = DlopenParse();
  REQUIRE(parse != nullptr);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(tmp / name, std::ios::binary) << bytes;
    return tmp / name;
  };
  const std::string good_text = "[stack]\nThread 1 (1, x)\n";
  const auto good = atraced::proto::EncodeStackDumpFile(good_text);
  const std::string good_bin = write("stackcore_tracer_35_1_x_20260101000000000000.bin", {good.begin(), good.end()});
  CHECK(parse(good_bin.c_str(), static_cast<uint32_t>(good_bin.size())) == TRACE_SUCCESS);
  CHECK(ReadFile(good_bin.substr(0, good_bin.size() - 4) + ".txt") == good_text);

  CHECK(parse(nullptr, 5) == TRACE_INVALID_PARAM);
  CHECK(parse(good_bin.c_str(), 0) == TRACE_INVALID_PARAM);
  CHECK(parse(good_bin.c_str(), static_cast<uint32_t>(good_bin.size() + 3)) == TRACE_INVALID_PARAM);  // len lies
  const std::string txt = write("x.txt", "text");
  CHECK(parse(txt.c_str(), static_cast<uint32_t>(txt.size())) == TRACE_INVALID_PARAM);
  const std::string missing = tmp / "missing.bin";
  CHECK(parse(missing.c_str(), static_cast<uint32_t>(missing.size())) == TRACE_FAILURE);
  const std::string cann_bin = write("cann.bin", std::string(64, '\x7f'));  // CANN's raw stack memory
  CHECK(parse(cann_bin.c_str(), static_cast<uint32_t>(cann_bin.size())) == TRACE_FAILURE);
  std::string lying(good.begin(), good.end());
  lying[8] = static_cast<char>(0xff);  // a length the file does not hold
  const std::string lying_bin = write("lying.bin", lying);
  CHECK(parse(lying_bin.c_str(), static_cast<uint32_t>(lying_bin.size())) == TRACE_FAILURE);
  CHECK_FALSE(atraced::testing::Exists(tmp / "lying.txt"));
  const std::string dir_bin = tmp / "dir.bin";
  REQUIRE(::mkdir(dir_bin.c_str(), 0700) == 0);
  CHECK(parse(dir_bin.c_str(), static_cast<uint32_t>(dir_bin.size())) == TRACE_FAILURE);
}
