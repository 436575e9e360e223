// The daemon's request handling, with no socket in it: decoded frames in, reply frames out.
// A session (daemon/ipc) feeds it bytes from a connection; tests drive it directly.
//
// This class is the dispatcher: it owns the client table, checks what every request must
// satisfy (HELLO first, negotiated features, no stray descriptor) and hands each opcode to
// the handler of its concern (daemon/service/src: events and files, rings and saves, crashes,
// deaths, queries, admission). It encodes the replies and logs the refusals.
//
// Threading: like the store it drives, a TraceService has a single owner, the daemon's
// event loop. Every call for every client runs there, in order.
//
// Identity: a client is what SO_PEERCRED and /proc say it is (PeerCredentials +
// ProcessTable). The only identity a payload may carry is EVENT_BEGIN's host_pid, a
// forwarder's claim, which only root, the daemon's uid or the forwarder group may make, and
// which is logged each time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "atraced/base/unique_fd.h"
#include "atraced/common/clock.h"
#include "atraced/common/log.h"
#include "atraced/processes/process_table.h"
#include "atraced/proto/codec.h"
#include "atraced/service/service_types.h"
#include "atraced/store/trace_store.h"

namespace atraced {

class TraceService {
 public:
  using ClientId = uint64_t;
  // What the service needs from the daemon, given once (service_types.h).
  using Dependencies = ServiceDependencies;

  // `deps` must name the store, the process table, the clock, the log and both runners.
  TraceService(Dependencies deps, ServiceLimits limits);
  ~TraceService();
  TraceService(const TraceService&) = delete;
  TraceService& operator=(const TraceService&) = delete;

  // `pidfd` refers to the peer process itself (PeerPidfd, process_identity.h); without one
  // (tests, an old kernel) the pid and its start time are all the daemon pins.
  ClientId Connect(const PeerCredentials& peer, UniqueFd pidfd = UniqueFd());
  // Where this client's replies that come after Handle returned go (Reply::kLater): a
  // DeferredReply answered later (deferred_reply.h). Called on the event loop; never after
  // Disconnect(id).
  void SetReplySink(ClientId id, std::function<void(ReplyBatch&&)> sink);
  // Ends the client's open files and events, keeping everything written.
  void Disconnect(ClientId id);
  // Where Handle put the request's reply.
  enum class Reply {
    kInBatch,  // appended to `out`
    // It comes later, through the client's reply sink (a save on the I/O workers, a CRASH
    // being inspected): the caller handles none of the connection's later requests until
    // then, so that replies stay in request order.
    kLater,
  };
  // Handles one request frame and appends its reply to `out`, or says it comes later.
  // `attached` is the descriptor that came with the frame's first byte (SCM_RIGHTS), if any:
  // only RING_REGISTER takes one; on any other frame it is a protocol violation and the
  // connection is closed.
  Reply Handle(ClientId id, const proto::FrameHeader& header, std::span<const uint8_t> payload, ReplyBatch& out,
               UniqueFd attached = UniqueFd());

  // The daemon's one refusal throttle (refusal_log.h), for refusals made outside Handle (the
  // listener's sheds): whether to log this one for `uid`, and how many were not logged since.
  bool ShouldLogRefusal(uint32_t uid, uint64_t* suppressed);

  // A 1.1 connection that holds rings is a process's registration for crash capture: the
  // session does not drop it for being idle (submitting records makes no request).
  bool HoldsRings(ClientId id) const;
  // Whether the session keeps this connection however long it is silent: it holds rings,
  // or it is the CRASH connection of a process whose other connection does (a signal
  // handler's way to the daemon). Any other silent connection ends at idle-timeout, so a
  // user cannot hold connections by asking for ATR_FEATURE_CRASH and saying nothing (issue 21).
  bool KeepWhileIdle(ClientId id) const;

  // Death without GOODBYE. A ring-holding connection that closes without GOODBYE is kept
  // as a departure until the kernel says whether its process ended (the socket closes a
  // moment before the process becomes a zombie). An ended process gets a stackcore event
  // dir: a report, then one file per ring. One still running after about 3 s (an exec, a
  // closed descriptor, a connection the daemon dropped) loses its rings, as before.
  // CheckDepartures re-checks them; the service asks for it through
  // Dependencies::schedule_departures (the event loop's timer), or a test calls it.
  void CheckDepartures();
  size_t departures() const;

  // SIGHUP: applies the limits that may change while the daemon runs, at once: the rate
  // limit, max-bytes-per-client and the unwind deadline of the next CRASH. The others sized
  // pools at start-up and keep their values (ServiceLimits).
  void ApplyLimits(const ServiceLimits& limits);
  // The timer's work: one log line per client process whose events the rate limit refused
  // during the last interval ("suppressed 1234 events from pid 77 (train.py)").
  void Tick();

  size_t clients() const;
  // The feature bits HELLO granted to this client (0 before HELLO or for an unknown id).
  uint64_t features(ClientId id) const;
  size_t rings() const;
  // Saves queued or running on the I/O runner whose completion has not run (shutdown waits).
  size_t saves_in_flight() const;
  // Shutdown (docs/IO_WORKERS.md): the saves no I/O worker has started, then (past the last
  // deadline) the ones still being written, are answered -ESHUTDOWN now. Return how many.
  size_t DropQueuedSaves();
  size_t AbandonRunningSaves();
  const ServiceCounters& counters() const;
  TraceStore& store();
  // One line for sd_notify STATUS=: counts per class and clients.
  std::string StatusLine() const;

 private:
  struct Rooms;  // the client table and the handlers, one per concern (trace_service.cc)
  std::unique_ptr<Rooms> rooms_;
};

}  // namespace atraced
