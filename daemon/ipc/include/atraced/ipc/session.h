// One client connection, on the daemon's single event-loop thread.
//
// Bytes from the socket go through a FrameDecoder straight into the TraceService, on the
// same thread: no request costs a thread hop. Replies are written in order, with any passed
// descriptor attached (SCM_RIGHTS) to the first byte of its reply frame.
//
// Fairness: a session handles at most kRequestsPerTurn requests, writes their replies, and
// if more are buffered it posts itself to the back of the loop's queue, so every other ready
// session gets a turn first (round robin). One client's burst cannot queue the others
// behind it.
//
// Flow control: a turn's replies must be written before the next turn starts and before the
// socket is read again, so the replies and descriptors queued for one session are bounded by
// one turn, and a client that stops reading stops being read.
//
// Deadlines: one per session, `idle_timeout` after its last progress (a request handled or
// a batch of replies written). A partial request does not count as progress, so a request
// trickled in byte by byte, a client that never reads its replies, and a silent client are
// all dropped at the deadline, their events ended and their descriptors released.
//
// Descriptors from the client (protocol 1.1: a memfd with RING_REGISTER) are read with
// recvmsg and tied to the stream offset of the read that carried them; they belong to the
// frame that starts at that offset. One that does not start a frame, more than
// kMaxPendingFds waiting, or a truncated control message close the connection. Only a
// session that negotiated ATR_FEATURE_MEMFD reads that way: recvmsg needs a readiness wait
// first, which costs Asio an epoll_ctl per read, while a plain speculative read (1.0
// clients, every event of libatrace_client) costs none; the kernel closes any descriptor a
// plain read does not take.
//
// Late replies: a request the service answers later (TraceService::Reply::kLater: a save on
// the I/O workers, a CRASH being inspected) parks the session: its earlier replies go out, nothing more is read or handled until the
// service delivers the reply through the sink the session registered, so replies stay in
// request order while every other session is served.
//
// A framing violation (bad magic, oversized length, unknown flag bits) closes this one
// connection, with a log line naming the peer pid and the reason.
#pragma once

#include <chrono>
#include <functional>
#include <deque>
#include <memory>

#include "atraced/common/log.h"
#include "atraced/service/trace_service.h"
#include "atraced/ipc/asio.h"
#include "atraced/proto/frame_decoder.h"

namespace atraced {

class Session : public std::enable_shared_from_this<Session> {
 public:
  static constexpr size_t kRequestsPerTurn = 16;
  static constexpr size_t kMaxPendingFds = 4;

  Session(LocalSocket socket, TraceService& service, Logger& log, std::chrono::seconds idle_timeout,
          std::function<void(Session*)> on_close);
  ~Session();

  void Start();
  // Stops reading, lets the replies in flight go out (a late one included), then closes.
  void Shutdown();
  int32_t peer_pid() const { return peer_.pid; }

 private:
  void DoRead();
  void OnRead(const boost::system::error_code& ec, size_t n);  // 1.0: plain reads
  void OnReadable(const boost::system::error_code& ec);         // 1.1: recvmsg with descriptors
  void Turn();
  void WriteNext();
  void AfterTurn();
  // The service's late reply (TraceService::Reply::kLater): sent, then the session reads on.
  void OnLateReply(ReplyBatch&& batch);
  void ArmDeadline(std::chrono::steady_clock::duration in);
  void OnDeadline();
  void Progress() { last_progress_ = std::chrono::steady_clock::now(); }
  void Close(const char* why);

  LocalSocket socket_;
  TraceService& service_;
  Logger& log_;
  std::chrono::seconds idle_timeout_;
  std::function<void(Session*)> on_close_;
  asio::steady_timer deadline_;
  std::chrono::steady_clock::time_point last_progress_;
  proto::FrameDecoder decoder_;
  PeerCredentials peer_;
  TraceService::ClientId client_id_ = 0;
  bool connected_to_service_ = false;
  bool closing_ = false;
  bool shutdown_requested_ = false;
  bool reading_ = false;    // an async read is outstanding
  bool more_ = false;       // the last turn stopped at its limit: frames may be buffered
  bool awaiting_reply_ = false;  // a request's reply comes later: handle nothing more until it comes
  std::shared_ptr<Session> parked_self_;  // set while awaiting_reply_: nothing else keeps it alive
  std::string violation_;   // set when the decoder fails
  uint64_t received_ = 0;   // stream bytes read so far
  uint64_t consumed_ = 0;   // stream bytes of the frames handed to the service
  struct PendingFd {
    uint64_t offset;  // stream offset of the first byte of the read that carried it
    UniqueFd fd;
  };
  std::deque<PendingFd> fds_in_;
  ReplyBatch replies_;
  size_t write_offset_ = 0;
  size_t next_fd_ = 0;
};

}  // namespace atraced
