// The library's connection to atraced: HELLO with ATR_FEATURE_MEMFD, ring registration
// (the memfd as SCM_RIGHTS), reports, saves, GOODBYE.
//
// Every member runs with State::mu held, never on the submit path. The link connects lazily,
// notices a daemon that went away at the next call, reconnects and registers every ring again
// (records submitted meanwhile are in the rings, so the next report has them). Each call is
// bounded: an absent daemon fails at once (the socket is missing or refuses), a hung one
// costs at most the connect or reply timeout and is then left alone for a second. An outage
// is logged to stderr once, and its end once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/proto/frame_decoder.h"
#include "atraced/base/unique_fd.h"

namespace ascend_trace {

struct State;
struct ObjectSlot;
struct RingShape;

class DaemonLink {
 public:
  DaemonLink();
  ~DaemonLink();

  // Registers a new object's ring, connecting first if needed. Best effort.
  void Register(State& s, ObjectSlot& o);
  // Registers s.ledger (ATR_RING_LEDGER), connecting first if needed: 0, or a negative
  // status/errno (-ENOTSUP: the daemon does not hold ledgers). Best effort.
  int RegisterLedger(State& s);
  // Tells a connected daemon that an object was destroyed (it keeps an exitSave ring until
  // GOODBYE). Without a connection nothing is sent: a reconnect registers only what lives.
  void Release(State& s, uint32_t wire_id);
  // 0, or a negative status/errno: the daemon is unreachable or refused.
  int Report(State& s, const std::vector<const ObjectSlot*>& objects, bool wait);
  int SaveAll(State& s, bool wait);
  // Process exit: the exitSave rings are written before this returns (bounded).
  void Goodbye(State& s);
  // In a forked child: drop the parent's connection without touching it.
  void ForgetAfterFork();

  uint32_t daemon_pid() const { return daemon_pid_; }

  // Whether a ring made now may be stamped with the cycle counter: the daemon, reached now
  // if it can be, granted ATR_FEATURE_RING_COUNTER. With no daemon reachable, yes: the one
  // that comes up later is expected to be as new as this library (the package restarts it
  // on upgrade); an older one refuses the ring at registration and says so.
  bool CounterRingsAccepted(State& s);

 private:
  int EnsureConnected(State& s);
  int Connect();
  // HELLO on `sock` asking for `features`; the reply's body decoded into `reply`.
  int Hello(int sock, atraced::proto::FrameDecoder& decoder, uint32_t request_id, uint64_t features,
            std::chrono::steady_clock::time_point deadline, atraced::proto::HelloReply* reply);
  // The CRASH connection (crash_handler.h): a second one, so that the signal handler owns a
  // socket no other thread reads or writes. Best effort: without it a crash is recorded as
  // a death without GOODBYE, with no backtrace.
  void OpenCrashChannel(const std::string& path, std::chrono::steady_clock::time_point deadline);
  void RegisterAll(State& s);
  int SendRegister(State& s, const std::string& name, uint32_t wire_id, bool exit_save, const RingShape& shape,
                   uint64_t ring_bytes, const std::vector<atraced::proto::RingStructEntry>& structs, int memfd,
                   uint8_t kind_flags = 0);
  int SendLedger(State& s);
  // One request, one reply. Returns the reply status (0 or < 0), or a transport -errno after
  // which the connection is dropped.
  int Exchange(uint16_t opcode, const std::vector<uint8_t>& payload, int fd, int timeout_ms,
               std::vector<uint8_t>* body = nullptr);
  static int SendAll(int sock, const std::vector<uint8_t>& frame, int fd, std::chrono::steady_clock::time_point deadline);
  static int ReadReply(int sock, atraced::proto::FrameDecoder& decoder, uint16_t opcode, uint32_t request_id,
                       std::chrono::steady_clock::time_point deadline, std::vector<uint8_t>* body,
                       std::string* message = nullptr);
  // LABELS: the job, rank and world size of the environment (read once), when the daemon
  // grants ATR_FEATURE_LABELS. A refusal is said once on stderr; tracing goes on without them.
  void SendLabels(std::chrono::steady_clock::time_point deadline);
  void Drop();
  void NoteOutage(int err);

  atraced::UniqueFd sock_;
  atraced::UniqueFd crash_sock_;  // handed to the signal handler; closed with sock_
  pid_t owner_ = 0;
  uint64_t epoch_ = 0;  // bumped on every connection
  uint32_t next_request_id_ = 1;
  uint32_t daemon_pid_ = 0;
  uint64_t granted_ = 0;  // the features the connected daemon granted
  std::unique_ptr<atraced::proto::FrameDecoder> decoder_;
  bool outage_logged_ = false;
  int last_error_ = 0;
  std::chrono::steady_clock::time_point retry_after_{};
};

}  // namespace ascend_trace
