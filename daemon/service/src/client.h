// One connection as the service sees it: who the peer is, what HELLO granted, and what it
// holds (open events and files, rings). Every handler works on one of these; the
// dispatcher's client table (client_table.h) owns them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "atraced/admission/fd_budget.h"
#include "atraced/admission/uid_share.h"
#include "atraced/base/unique_fd.h"
#include "atraced/proto/codec.h"
#include "atraced/processes/oom_count.h"
#include "atraced/processes/process_identity.h"
#include "atraced/rings/held_ring.h"
#include "atraced/service/service_types.h"
#include "atraced/store/file_system.h"
#include "atraced/store/names.h"

namespace atraced {

using ClientId = uint64_t;

struct OpenFile {
  uint64_t seq = 0;
  uint32_t event_id = 0;
  std::unique_ptr<WritableFile> file;
  FdCharge charge;         // the file's descriptor, charged to the peer's uid
  DiskUsage accounted;     // use of the file already added to the store's counters
  bool passed = false;     // a descriptor went to the client: it may write behind our back
};

// A ring and what holding it costs its owner's uid (issue 21).
struct ClientRing {
  HeldRing ring;
  UidCharge slot;    // one of the uid's share of max-rings
  UidCharge memory;  // HeldRing::MemoryCost, in the uid's share of max-ring-memory
};

struct Client {
  PeerCredentials peer;
  // The peer process itself (process_identity.h), kept for a 1.1 connection (MEMFD), whose
  // process may be looked at (CRASH) or reported on (a death): the rest let it go at HELLO.
  UniqueFd pidfd;
  std::string process_dir;
  // The process's UTC offset (its rings tell it): its event and report names use its local
  // time, as CANN's do. nullopt: the daemon's local time.
  std::optional<int32_t> utc_offset_s;
  // process_dir parsed once at connect (nullopt if malformed), not on every EVENT_BEGIN.
  std::optional<ProcessDirName> process_name;
  bool hello_done = false;
  uint64_t features = 0;
  bool may_forward = false;
  // Reads every user's traces, so LIST and a VACUUM_BY dry run show it everyone's: root, the
  // daemon's uid and the reader group (by its gid or a supplementary group at connect time).
  bool reads_all = false;
  // Whether LIST shows it a directory made for `uid`, and DUMPS_EXPORTED lets it release one.
  bool Reads(uint32_t uid) const { return reads_all || uid == peer.uid; }
  std::unordered_map<uint32_t, uint64_t> events;  // client event id -> store sequence
  std::unordered_map<uint32_t, OpenFile> files;   // client file id -> open file
  std::map<uint32_t, ClientRing> rings;            // object id -> ring, live or released
  // Destroyed exitSave objects kept for GOODBYE: object id -> the order of its release
  // (1, 2, ...), because at exit CANN keeps the last destroyed of one name.
  std::map<uint32_t, uint64_t> released;
  uint64_t releases = 0;  // RING_RELEASEs of exitSave rings so far: the next order
  bool counted_ring_holder = false;  // counted in its ProcessRecord's ring_holders
  bool goodbye = false;
  bool crash_recorded = false;  // CRASH wrote this process's stackcore dir: no second one at close
  bool crash_pending = false;   // the rings' holder of a CRASH being inspected off the loop
  std::function<void(ReplyBatch&&)> reply_sink;
  // For the report of a death without GOODBYE (rings clients only).
  uint64_t start_ticks = 0;
  std::string program;
  std::string cmdline;  // captured at HELLO
  // The job, rank and world size its process sent (LABELS, on this connection or another of
  // the process): what its directories are labelled with. Grants nothing.
  proto::Labels labels;
  // LABELS' hang_timeout (ATRACE_HANG_TIMEOUT): what the process asked of the hang watch,
  // which takes it only below its own hang-timeout. nullopt: not asked.
  std::optional<std::chrono::milliseconds> hang_timeout;
  OomCount oom_at_hello;  // the memory cgroup's OOM kills at HELLO (oom_count.h)
  std::chrono::system_clock::time_point connected{};
  std::chrono::system_clock::time_point last_activity{};

  ProcessIdentity identity() const { return {peer.pid, start_ticks, peer.uid, peer.gid}; }
};

}  // namespace atraced
