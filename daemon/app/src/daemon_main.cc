#include "atraced/app/daemon_main.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "atraced/app/config.h"
#include "atraced/core/posix_file_system.h"
#include "atraced/core/record_num.h"
#include "atraced/core/root.h"
#include "atraced/core/trace_store.h"
#include "atraced/proto/socket_path.h"

namespace atraced {
namespace {

int Run(const Config& config) {
  Logger log(StderrSink(), config.log_level);
  auto root = ResolveRoot(RootSourcesFromEnvironment(config.root, config.configured_root), log);
  if (!root.ok()) {
    log.Error(root.status().message());
    return 1;
  }
  uint32_t record_num = config.record_num ? *config.record_num
                                          : RecordNumFromEnv(std::getenv("ASCEND_TRACE_RECORD_NUM"),
                                                             config.configured_record_num, log);
  if (config.record_num) log.Info("set dir num=", record_num, " by --record-num.");
  auto fs = PosixFileSystem::Open(root->path);
  if (!fs.ok()) {
    log.Error("cannot open trace directory: ", fs.status().message());
    return 1;
  }
  SystemClock clock;
  TraceStore store(**fs, clock, log, record_num);
  if (Status st = store.Recover(); !st.ok()) {
    log.Error("recovery failed: ", st.message());
    return 1;
  }
  std::string socket_path = config.socket_path.value_or(proto::DefaultDaemonSocketPath());
  log.Notice("atraced: trace root ", root->path, " (from ", root->source, "), trace dir ", (*fs)->trace_dir(),
             ", record num ", record_num, ", would listen on ", socket_path,
             " (the socket server is not built yet; waiting for SIGINT/SIGTERM)");
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  int sig = 0;
  sigwait(&set, &sig);
  log.Notice("atraced: stopping on signal ", sig);
  return 0;
}

}  // namespace

int DaemonMain(int argc, const char* const* argv) {
  try {
    ParsedCommandLine cl = ParseCommandLine(argc, argv);
    switch (cl.outcome) {
      case ParsedCommandLine::Outcome::kExitSuccess:
        std::printf("%s\n", cl.output.c_str());
        return 0;
      case ParsedCommandLine::Outcome::kUsageError:
        std::fprintf(stderr, "%s\n", cl.output.c_str());
        return 2;
      case ParsedCommandLine::Outcome::kRun:
        break;
    }
    return Run(cl.config);
  } catch (const std::exception& e) {  // the one top-level catch: report, never crash silently
    std::fprintf(stderr, "<2>atraced: fatal: %s\n", e.what());
    return 1;
  }
}

}  // namespace atraced
