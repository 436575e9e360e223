// The daemon's request handling, with no socket in it: decoded frames in, reply frames out.
// A session (daemon/ipc) feeds it bytes from a connection; tests drive it directly.
//
// Threading: like the store it drives, a TraceService has a single owner, the daemon's
// event loop. Every call for every client runs there, in order.
//
// Identity: a client is what SO_PEERCRED and /proc say it is (PeerCredentials +
// ProcessTable). The only identity a payload may carry is EVENT_BEGIN's host_pid, a
// forwarder's claim, which only root, the daemon's uid or the forwarder group may make, and
// which is logged each time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <initializer_list>
#include <unordered_map>
#include <vector>

#include <chrono>
#include <functional>
#include <memory>

#include "atraced/core/clock.h"
#include "atraced/core/crash_inspector.h"
#include "atraced/core/fd_budget.h"
#include "atraced/core/file_system.h"
#include "atraced/core/held_ring.h"
#include "atraced/core/log.h"
#include "atraced/core/process_table.h"
#include "atraced/core/rate_limit.h"
#include "atraced/core/trace_store.h"
#include "atraced/base/unique_fd.h"
#include "atraced/proto/codec.h"

namespace atraced {

struct PeerCredentials {
  int32_t pid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

struct ServiceOptions {
  uint32_t max_events_per_client = 64;
  uint32_t max_files_per_client = 256;
  uint32_t daemon_uid = 0;              // may always forward
  std::optional<gid_t> forwarder_gid;   // members may forward
  std::string root;                     // for STATUS
  // Rings (1.1) held per connection and in all: each costs one read-only mapping of at most
  // ATR_RING_MAX_BYTES of address space and no descriptor (held_ring.h). CANN allows 100
  // objects per tracer type; the rest is room for destroyed exitSave objects.
  uint32_t max_rings_per_client = 256;
  uint32_t max_rings_total = 8192;
  // Charged one descriptor per open file and per descriptor waiting to be passed, to the
  // peer's uid (fd_budget.h). nullptr: no budget (tests of other things).
  FdBudget* fd_budget = nullptr;
  // Event directories a client process may create (rate_limit.h): one bucket for schedule
  // events and another for exit and stackcore ones, so chatty schedule traffic cannot
  // starve a process's last words. Refused with -EAGAIN.
  RateLimit rate_limit;
  // Bytes one client process may write over its life (daemon appends and what it wrote
  // through passed descriptors, counted when the file is closed); 0: no bound. -EBUSY.
  uint64_t max_bytes_per_client = 0;
  // CRASH: who looks at the crashed process from outside (threads, backtrace, maps), and
  // how long it may take (on the runner's thread, or the event loop without one); the
  // process's handler waits longer (5 s by default). nullptr: the report says there is no
  // unwinder, and the rings are still written.
  CrashInspector* crash_inspector = nullptr;
  std::chrono::milliseconds crash_budget{2000};
  // Where the inspection runs. nullptr: on the event loop, inside Handle (tests, fuzzers).
  // Set: CRASH's reply is deferred (ReplyBatch::deferred) and delivered through the
  // connection's reply sink (SetReplySink) once the runner hands the facts back.
  CrashRunner* crash_runner = nullptr;
  // Each unwind costs a helper process (and, without a runner, stalls the event loop): one
  // uid gets at most this many unwinds a minute
  // (a crash loop, or a user forking processes that crash on purpose). Past it the report
  // has threads and maps but no backtrace, and says why.
  uint32_t crash_unwinds_per_uid_per_minute = 5;
};

// Replies to one batch of requests, in request order.
struct ReplyBatch {
  struct PassedFd {
    size_t offset = 0;  // the descriptor travels with the reply frame starting here
    UniqueFd fd;
    FdCharge charge;    // released with the batch, once the descriptor went out
  };
  std::vector<uint8_t> bytes;
  std::vector<PassedFd> fds;
  bool close_after = false;  // the connection ends once these replies are sent
  // The last request's reply comes later, through the connection's reply sink (a CRASH being
  // inspected off the loop): handle none of the connection's later requests until then, so
  // replies stay in request order.
  bool deferred = false;
};

struct ServiceCounters {
  uint64_t requests = 0;
  uint64_t requests_refused = 0;
  uint64_t forwarder_claims = 0;
  uint64_t rings_refused = 0;  // registrations refused: a bound, a bad memfd or header
  uint64_t rings_saved = 0;    // ring files written
  uint64_t deaths_recorded = 0;  // stackcore dirs written for processes that died without GOODBYE
  uint64_t refused_rate_limit = 0;    // events refused by a client's rate limit
  uint64_t refused_client_bytes = 0;  // writes refused by max-bytes-per-client
  uint64_t crashes_recorded = 0; // stackcore dirs written at CRASH, while the process waited
};

class TraceService {
 public:
  using ClientId = uint64_t;

  TraceService(TraceStore& store, ProcessTable& processes, Clock& clock, Logger& log, ServiceOptions options);
  ~TraceService();

  ClientId Connect(const PeerCredentials& peer);
  // Where a deferred reply of this client goes (see ReplyBatch::deferred). Called on the
  // event loop; never after Disconnect(id).
  void SetReplySink(ClientId id, std::function<void(ReplyBatch&&)> sink);
  // Ends the client's open files and events, keeping everything written.
  void Disconnect(ClientId id);
  // Handles one request frame and appends its reply to `out`. `attached` is the descriptor
  // that came with the frame's first byte (SCM_RIGHTS), if any: only RING_REGISTER takes
  // one; on any other frame it is a protocol violation and the connection is closed.
  void Handle(ClientId id, const proto::FrameHeader& header, std::span<const uint8_t> payload, ReplyBatch& out,
              UniqueFd attached = UniqueFd());

  // A 1.1 connection that holds rings is a process's registration for crash capture: the
  // session does not drop it for being idle (submitting records makes no request).
  bool HoldsRings(ClientId id) const;

  // Death without GOODBYE. A ring-holding connection that closes without GOODBYE is kept
  // as a departure until the kernel says whether its process ended (the socket closes a
  // moment before the process becomes a zombie). An ended process gets a stackcore event
  // dir: a report, then one file per ring. One still running after about 3 s (an exec, a
  // closed descriptor, a connection the daemon dropped) loses its rings, as before.
  // CheckDepartures re-checks them; the service asks for it through the scheduler (the
  // event loop's timer), or a test calls it.
  void SetDepartureScheduler(std::function<void(std::chrono::milliseconds)> schedule) {
    schedule_departures_ = std::move(schedule);
  }
  void CheckDepartures();
  size_t departures() const { return departures_.size(); }

  // Applies new per-client limits at once (SIGHUP).
  void SetClientLimits(const RateLimit& rate_limit, uint64_t max_bytes_per_client);
  // Where the next CRASH is inspected (ServiceOptions::crash_runner); nullptr: inline. The
  // runner's `done` must run on the event loop, and never after the service is destroyed.
  void SetCrashRunner(CrashRunner* runner) { options_.crash_runner = runner; }
  // The unwind deadline for the next CRASH (SIGHUP: crash-unwind-timeout-ms).
  void SetCrashBudget(std::chrono::milliseconds budget) { options_.crash_budget = budget; }
  // The timer's work: one log line per client process whose events the rate limit refused
  // during the last interval ("suppressed 1234 events from pid 77 (train.py)").
  void Tick();

  size_t clients() const { return clients_.size(); }
  // The feature bits HELLO granted to this client (0 before HELLO or for an unknown id).
  uint64_t features(ClientId id) const {
    auto it = clients_.find(id);
    return it == clients_.end() ? 0 : it->second.features;
  }
  size_t rings() const { return rings_total_; }
  const ServiceCounters& counters() const { return counters_; }
  TraceStore& store() { return store_; }
  // One line for sd_notify STATUS=: counts per class and clients.
  std::string StatusLine() const;

 private:
  struct OpenFile {
    uint64_t seq = 0;
    uint32_t event_id = 0;
    std::unique_ptr<WritableFile> file;
    FdCharge charge;         // the file's descriptor, charged to the peer's uid
    DiskUsage accounted;     // use of the file already added to the store's counters
    bool passed = false;     // a descriptor went to the client: it may write behind our back
  };
  struct Client {
    PeerCredentials peer;
    std::string process_dir;
    // process_dir parsed once at connect (nullopt if malformed), not on every EVENT_BEGIN.
    std::optional<ProcessDirName> process_name;
    bool hello_done = false;
    uint64_t features = 0;
    bool may_forward = false;
    std::unordered_map<uint32_t, uint64_t> events;  // client event id -> store sequence
    std::unordered_map<uint32_t, OpenFile> files;   // client file id -> open file
    std::map<uint32_t, HeldRing> rings;              // object id -> ring, live or released
    std::set<uint32_t> released;                     // destroyed exitSave objects kept for GOODBYE
    bool goodbye = false;
    bool crash_recorded = false;  // CRASH wrote this process's stackcore dir: no second one at close
    bool crash_pending = false;   // the rings' holder of a CRASH being inspected off the loop
    std::function<void(ReplyBatch&&)> reply_sink;
    // For the report of a death without GOODBYE (rings clients only).
    uint64_t start_ticks = 0;
    std::string program;
    std::string cmdline;  // captured at HELLO
    OomCount oom_at_hello;  // the memory cgroup's OOM kills at HELLO (oom_count.h)
    std::chrono::system_clock::time_point connected{};
    std::chrono::system_clock::time_point last_activity{};
  };
  // A ring-holding client whose connection closed without GOODBYE (see CheckDepartures).
  struct Departure {
    Client client;
    std::chrono::system_clock::time_point closed{};
    uint32_t checks = 0;
  };
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
  // A failed request: the status (negative errno) and the message the client sees.
  struct Refusal {
    int32_t status;
    std::string message;
    bool fd_budget = false;  // a descriptor refusal: logged once per interval per uid
    bool logged_elsewhere = false;  // a rate-limit or disk refusal: its own summary lines
  };
  using Reply = std::optional<Refusal>;

  ProcessRecord* RecordFor(int32_t pid, const std::optional<ProcessFacts>& facts);
  // Adds to the store's and the process's counters what the file holds beyond what was
  // counted already. A passed file is measured with fstat first: its holder may have
  // written anywhere in it.
  void Account(const Client& c, OpenFile& f);
  // Accounts every open file whose descriptor was passed, so STATUS and LIST report what
  // the disk holds now, not at the files' close. One fstat per such file.
  void AccountPassedFiles();
  // Closes the file and accounts what was written to it; returns its final length.
  uint64_t CloseFile(const Client& c, OpenFile& f);
  // The rate limit of the client's process for one more event of `kind`.
  Reply AdmitEvent(const Client& c, EventKind kind);
  // max-bytes-per-client: may the client's process write `incoming` more bytes?
  Reply AdmitBytes(const Client& c, uint64_t incoming);
  Reply OnHello(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body, bool* close_after);
  Reply OnEventBegin(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  // Encodes a PathReply of the concatenated parts into `body`, reusing path_reply_'s buffer.
  void EncodePath(std::initializer_list<std::string_view> parts, std::vector<uint8_t>& body);
  Reply OnFileOpen(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Reply OnFileAppend(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Reply OnFileGetFd(Client& c, std::span<const uint8_t> payload, UniqueFd* passed, FdCharge* charge);
  // Charges one descriptor to the client's uid, or the refusal to reply with.
  Reply ChargeFd(const Client& c, FdCharge* charge);
  Reply OnFileClose(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Reply OnEventEnd(Client& c, std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Reply OnStatus(std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Reply OnList(std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Reply OnVacuum(std::span<const uint8_t> payload, std::vector<uint8_t>& body);
  Reply OnRingRegister(Client& c, std::span<const uint8_t> payload, UniqueFd memfd);
  Reply OnRingRelease(Client& c, std::span<const uint8_t> payload);
  Reply OnRingReport(Client& c, std::span<const uint8_t> payload);
  Reply OnRingSaveAll(Client& c, std::span<const uint8_t> payload);
  Reply OnGoodbye(Client& c, std::span<const uint8_t> payload);
  Reply OnCrash(Client& c, std::span<const uint8_t> payload);
  // CRASH with a runner: checks it as OnCrash does and starts the inspection; no refusal
  // means the reply is deferred (FinishCrash sends it).
  Reply StartCrash(ClientId id, Client& c, const proto::FrameHeader& h, std::span<const uint8_t> payload);
  void FinishCrash(uint64_t token, CrashFacts facts);
  // What OnCrash and StartCrash check before looking: the rings' holder, or a refusal.
  Reply CheckCrash(Client& c, std::span<const uint8_t> payload, proto::Crash* m, Client** holder);
  // The stackcore dir of a crash: the report (from `facts`) and the rings.
  Reply WriteCrashReport(int32_t pid, const Client& holder, const proto::Crash& m, const CrashFacts& facts,
                         std::chrono::system_clock::time_point looked);
  CrashFacts NoUnwindFacts(CrashFacts facts, uint32_t uid) const;
  // The on-demand dump signal: RING_SAVE_ALL for the process's ring-holding connection.
  Reply OnDump(Client& c, std::span<const uint8_t> payload);
  // Whether uid may have another unwind now (crash_unwinds_per_uid_per_minute); counts it.
  bool TakeUnwind(uint32_t uid);
  // The connection of c's process (pid and start time) that holds rings: c or another.
  Client* RingHolderOf(Client& c);
  // The rings RING_SAVE_ALL and DUMP save: every live one (destroyed exitSave ones wait for exit).
  static std::vector<const HeldRing*> UnreleasedRings(const Client& c);
  // The rings a death or a crash saves: one per object name, a live object over a destroyed
  // exitSave one of the same name, else the newest. `names` lists them for the report.
  static std::vector<const HeldRing*> RingsAtDeath(const Client& c, std::string* names);
  // Writes the chosen rings of `c` into one new event directory of `kind` (none is made
  // when no ring holds a record).
  // `report`, if given, is written first and makes the directory even without records.
  Reply SaveRings(const Client& c, EventKind kind, const std::vector<const HeldRing*>& rings,
                  const HeldRing::File* report = nullptr);
  // Writes the stackcore dir of a departed client whose process ended.
  void RecordDeath(const Departure& d, const ProcessEnd& end);
  // Releases what a client still holds once it is gone for good.
  void Forget(Client& c);
  void ScheduleDepartures();
  void DropRing(Client& c, std::map<uint32_t, HeldRing>::iterator it);

  TraceStore& store_;
  ProcessTable& processes_;
  Clock& clock_;
  Logger& log_;
  ServiceOptions options_;
  ClientId next_client_ = 1;
  std::unordered_map<ClientId, Client> clients_;
  std::unordered_map<int32_t, ProcessRecord> process_records_;
  size_t rings_total_ = 0;
  ServiceCounters counters_;
  std::vector<Departure> departures_;
  // CRASHes whose inspection runs off the loop (crash_runner), by token; and the rings'
  // holders whose connection closed meanwhile, kept until their report is written.
  struct PendingCrash {
    ClientId channel = 0;  // where the reply goes
    ClientId holder = 0;   // whose rings are saved
    int32_t pid = 0;
    uint16_t opcode = 0;
    uint32_t request_id = 0;
    proto::Crash m;
    std::chrono::system_clock::time_point looked{};
  };
  std::map<uint64_t, PendingCrash> pending_crashes_;
  uint64_t next_crash_token_ = 1;
  std::map<ClientId, Client> crash_waiting_;
  std::unordered_map<uint32_t, std::vector<std::chrono::system_clock::time_point>> unwinds_by_uid_;  // the last minute's
  std::function<void(std::chrono::milliseconds)> schedule_departures_;
  bool destroying_ = false;
  // Scratch for Handle: a request's reply body and its encoded reply. Kept between requests
  // so that a steady stream of requests encodes its replies without allocating (a fresh
  // vector grew by push_back several times per reply). Handle is never re-entered.
  std::vector<uint8_t> body_scratch_;
  std::vector<uint8_t> reply_scratch_;
  // The absolute path of EVENT_BEGIN's and FILE_OPEN's replies, built in place (see
  // EncodePath).
  proto::PathReply path_reply_;
  // Scratch larger than this (a big LIST or STATUS reply) is released after the request, so
  // one rare reply does not keep its memory for the daemon's lifetime.
  static constexpr size_t kMaxKeptScratch = 64 * 1024;
};

}  // namespace atraced
