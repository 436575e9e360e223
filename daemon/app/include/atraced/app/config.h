// atraced's configuration: command line and configuration file (Boost.Program_options).
//
// Precedence, highest first: flags, the environment (ASCEND_WORK_PATH,
// ASCEND_TRACE_RECORD_NUM, with CANN's soft fallback), the configuration file, defaults.
// A flag or configuration value is an explicit setting: a bad one is refused with a message
// naming the key and what is allowed (exit code 2), never replaced by a default.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "atraced/base/time_span.h"  // ParseTimeSpan, the syntax of the span keys
#include "atraced/common/log.h"
#include "atraced/service/service_types.h"  // HangWatchSettings
#include "atraced/admission/rate_limit.h"
#include "atraced/store/retention.h"

namespace atraced {

struct Config {
  std::optional<std::string> config_file;
  std::optional<std::string> root;             // --root (explicit)
  std::optional<std::string> configured_root;  // `root` in the configuration file
  std::optional<std::string> socket_path;      // --socket / `socket`; unset: DefaultSocketPath()
  std::optional<uint32_t> record_num;          // --record-num (explicit)
  std::optional<uint32_t> configured_record_num;  // `record-num` in the configuration file
  LogLevel log_level = LogLevel::kInfo;
  std::optional<std::string> socket_group;     // group owning the socket (mode 0660)
  std::optional<std::string> forwarder_group;  // members may write on behalf of other pids
  std::optional<std::string> reader_group;     // members read every user's traces (root always does)
  uint32_t idle_timeout_s = 60;                // a silent connection is dropped after this
  uint32_t max_clients = 16384;                // connections served at once (2 per libascend_trace process)
  uint32_t uid_connection_share = 25;          // percent of max_clients one uid may hold
  uint32_t max_rings = 32768;                  // rings held at once, below vm.max_map_count
  uint64_t max_ring_memory = 4ull << 30;       // what held rings may cost (HeldRing::MemoryCost)
  uint32_t uid_ring_share = 25;                // percent of max_rings and max_ring_memory per uid
  uint32_t io_workers = 0;                     // 0: auto (IoPool::AutoWorkers)
  uint64_t max_queued_bytes = 1ull << 30;      // what queued saves may reserve, in all
  uint32_t uid_queued_share = 25;              // percent of max_queued_bytes per uid
  uint32_t max_events_per_client = 64;
  uint32_t max_files_per_client = 256;
  uint32_t uid_descriptor_share = 25;          // percent of the client descriptor budget per uid
  uint32_t exit_record_num = 100;              // exit dirs kept (newest), kExitRecordNumMin..Max
  RetentionSettings retention;                 // max-use, keep-free, aging-policy, max-age
  RateLimit rate_limit;                        // rate-limit-interval, rate-limit-burst
  uint64_t max_bytes_per_client = 0;           // 0: no bound
  uint32_t crash_all_threads = 0;              // 1: a CRASH report has every thread's backtrace
  uint32_t crash_unwind_timeout_ms = 2000;     // the unwind's deadline (on the crash runner's thread)
  HangWatchSettings hang;                      // hang-timeout, hang-watch-unlabelled, hang-dumps-per-hour
  std::chrono::seconds dump_keep = std::chrono::hours(24);  // a dump's directories escape count aging this long
};

struct ParsedCommandLine {
  enum class Outcome { kRun, kExitSuccess, kUsageError } outcome = Outcome::kRun;
  Config config;
  std::string output;  // help/version text, or the error message
};

// Parses argv and, if --config is given, that file. Never throws.
ParsedCommandLine ParseCommandLine(int argc, const char* const* argv);

// Parses configuration text (the file format of conf/atraced.conf) over `config`.
// Returns an error message naming the key, or "" on success. Never throws.
std::string ParseConfigText(const std::string& text, const std::string& origin, Config* config);

std::string UsageText();

}  // namespace atraced
