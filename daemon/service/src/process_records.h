// One record per client process (pid and start time), shared by all its connections: the
// name of its trace_ directory and the per-process limits of admission.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "atraced/admission/rate_limit.h"
#include "atraced/common/clock.h"
#include "atraced/processes/process_table.h"
#include "atraced/store/names.h"

namespace atraced {

struct ProcessRecord {
  uint64_t start_ticks = 0;
  ProcessDirName name;
  uint32_t connections = 0;
  // Per-process limits: every connection of the process shares them.
  TokenBucket schedule_bucket;
  TokenBucket final_bucket;  // exit and stackcore events
  uint64_t suppressed = 0;   // refused by the rate limit since the last report
  std::chrono::system_clock::time_point suppressed_since{};
  uint64_t bytes = 0;        // written, for max-bytes-per-client
  std::string program;
};

class ProcessRecords {
 public:
  using Map = std::unordered_map<int32_t, ProcessRecord>;

  ProcessRecords(ProcessTable& processes, Clock& clock) : processes_(processes), clock_(clock) {}

  // The record of pid as `facts` describe it (nullopt: /proc could not tell), made if new.
  ProcessRecord* RecordFor(int32_t pid, const std::optional<ProcessFacts>& facts);
  ProcessRecord* Find(int32_t pid) {
    auto it = records_.find(pid);
    return it == records_.end() ? nullptr : &it->second;
  }
  // One connection of the process whose trace_ dir is `process_dir` closed.
  void Disconnected(int32_t pid, const std::string& process_dir);

  Map::iterator begin() { return records_.begin(); }
  Map::iterator end() { return records_.end(); }

  static constexpr size_t kMaxRecords = 4096;  // beyond this, records of gone processes are pruned

 private:
  ProcessTable& processes_;
  Clock& clock_;
  Map records_;
};

}  // namespace atraced
