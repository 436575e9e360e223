// One record per client process, shared by all its connections: the name of its trace_
// directory, whether its crash was recorded, and the per-process limits of admission.h.
// Keyed by pid and start time, never by pid alone: a reused pid is another process, with a
// directory and limits of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "atraced/admission/rate_limit.h"
#include "atraced/common/refusal_log.h"
#include "atraced/base/status.h"
#include "atraced/common/log.h"
#include "atraced/common/clock.h"
#include "atraced/proto/codec.h"
#include "atraced/processes/process_table.h"
#include "atraced/store/names.h"
#include "client_table.h"

namespace atraced {

struct ProcessRecord {
  uint64_t start_ticks = 0;
  ProcessDirName name;
  // The process directory is named with the time of the first connection, in the process's
  // own local time as CANN names it: the UTC offset comes with the first RING_REGISTER, so
  // the name is settled then (or at the first EVENT_BEGIN or STACK_DUMP, whichever comes
  // first, in the daemon's local time when no offset is known by then).
  std::chrono::system_clock::time_point first_connected{};
  std::optional<int32_t> utc_offset_s;
  bool name_settled = false;
  uint32_t connections = 0;
  // Connections of the process that hold rings (Rings keeps it): while one does, its CRASH
  // connection is kept however long it is silent; without one, it is any idle connection.
  uint32_t ring_holders = 0;
  bool crash_recorded = false;  // one CRASH report per process, whichever connection asks
  // The uid its directory is made for (and granted to): that of the connection that made the
  // record, or of the latest whose uid differed (a set-id exec, a setuid call), which started
  // a new directory. Not set for a record a forwarder's claim made.
  std::optional<uint32_t> owner_uid;
  // Per-process limits: every connection of the process shares them.
  TokenBucket schedule_bucket;
  TokenBucket final_bucket;  // exit and stackcore events
  uint64_t suppressed = 0;   // refused by the rate limit since the last report
  std::chrono::system_clock::time_point suppressed_since{};
  uint32_t uid = 0;          // of the connection refused: its summary goes through that uid's throttle
  uint64_t bytes = 0;        // written, for max-bytes-per-client
  std::string program;
  proto::Labels labels;  // LABELS: copied to each connection of the process, present and later
  // The devices this process receives from (device_reports.h), by device id: the device-side
  // events it began for each, and how many of them its DEVICE_STATS said were saved.
  struct DeviceReport {
    uint64_t events = 0;
    uint64_t saved = 0;
  };
  std::map<uint32_t, DeviceReport> devices;
};

class ProcessRecords {
 public:
  using Key = std::pair<int32_t, uint64_t>;  // pid, start time (0: unknown)
  using Map = std::map<Key, ProcessRecord>;

  ProcessRecords(ProcessTable& processes, Clock& clock, Logger& log) : processes_(processes), clock_(clock), log_(log) {}

  // The record of pid as `facts` describe it, made if new; without facts (/proc could not
  // tell, or the connector was gone), the pid's record of unknown start time.
  ProcessRecord* RecordFor(int32_t pid, const std::optional<ProcessFacts>& facts);
  // The record for a new connection of pid with the credentials `uid` (SO_PEERCRED). A
  // process whose credentials changed since its directory was made (an exec of a set-id
  // program, a setuid call) gets a new directory, named with the time of this connection and
  // granted to `uid` alone when it is made: the new owner's traces never land in a directory
  // the old uid may read. Its connections from before keep the old one.
  ProcessRecord* RecordForConnection(int32_t pid, const std::optional<ProcessFacts>& facts, uint32_t uid);
  ProcessRecord* Find(int32_t pid, uint64_t start_ticks) {
    auto it = records_.find({pid, start_ticks});
    return it == records_.end() ? nullptr : &it->second;
  }
  // A record of pid that has a connection now, whatever its start time.
  ProcessRecord* FindConnected(int32_t pid);
  // One connection of the process closed.
  void Disconnected(int32_t pid, uint64_t start_ticks);
  // Whether LABELS from `uid` gets its line now: the refusal throttle's rule (refusal_log.h),
  // one line per uid per interval, `*suppressed` counting those not logged since. A process
  // may relabel in a loop; the journal gets a line per interval, not one per request.
  bool ShouldLogLabels(uint32_t uid, uint64_t* suppressed);

  Map::iterator begin() { return records_.begin(); }
  Map::iterator end() { return records_.end(); }

  static constexpr size_t kMaxRecords = 4096;  // beyond this, records of gone processes are pruned

 private:
  ProcessTable& processes_;
  Clock& clock_;
  Logger& log_;
  Map records_;
  RefusalLog label_lines_;  // apart from the refusals': relabelling never hides a refusal's line
};

// LABELS (ATR_FEATURE_LABELS): the job, rank and world size c's process read from its
// environment, and the hang timeout it asks for (ATR_FEATURE_HANG_TIMEOUT), checked
// (proto::CheckLabel, CheckHangTimeout: a bad one refuses them all, named in the error)
// and kept on its record and on each of its connections now, so that every directory made for
// it afterwards is labelled (order log, LIST, journal); a later connection's events take them
// from the record (EventFiles). They are the process's word: nothing is granted by them.
// `started` is called when the process's labels are new (its start entry, hang_watch.h).
Status ApplyLabels(Client& c, std::span<const uint8_t> payload, ClientTable& clients, ProcessRecords& records,
                   Logger& log, const std::function<void(const Client&)>& started);

}  // namespace atraced
