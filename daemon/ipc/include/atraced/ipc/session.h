// One client connection: bytes from the socket go through a FrameDecoder to the
// TraceService on the storage executor; the replies come back and are written in order,
// with any passed descriptor attached (SCM_RIGHTS) to the first byte of its reply frame.
//
// Flow control: a session has at most one batch of requests in flight. It reads, hands
// everything it read to the storage executor, writes the replies, then reads again. So a
// client that pipelines costs one thread hand-off per read, not per request, and a client
// that stops reading its replies stops being read — it cannot make the daemon buffer
// without bound.
//
// A framing violation (bad magic, oversized length, unknown flag bits) closes this one
// connection, with a log line naming the peer pid and the reason. An idle deadline drops a
// client that says nothing.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "atraced/core/log.h"
#include "atraced/core/trace_service.h"
#include "atraced/ipc/asio.h"
#include "atraced/proto/frame_decoder.h"

namespace atraced {

// Where the service lives: the executor every service call is posted to.
struct ServiceHandle {
  asio::any_io_executor executor;  // the storage executor
  TraceService* service;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(LocalSocket socket, ServiceHandle service, Logger& log, std::chrono::seconds idle_timeout,
          std::function<void(Session*)> on_close);
  ~Session();

  void Start();
  // Stops reading, lets the batch in flight finish and its replies go out, then closes.
  void Shutdown();
  int32_t peer_pid() const { return peer_.pid; }

 private:
  void DoRead();
  void OnRead(const boost::system::error_code& ec, size_t n);
  void ProcessOnStorage();  // runs on the storage executor
  void WriteReplies();
  void WriteNext();
  void ArmIdleTimer();
  void Close(const char* why);

  LocalSocket socket_;
  ServiceHandle service_;
  Logger& log_;
  std::chrono::seconds idle_timeout_;
  std::function<void(Session*)> on_close_;
  asio::steady_timer idle_timer_;
  proto::FrameDecoder decoder_;
  PeerCredentials peer_;
  TraceService::ClientId client_id_ = 0;
  bool connected_to_service_ = false;
  bool closing_ = false;
  bool shutdown_requested_ = false;
  bool busy_ = false;  // a batch is on the storage executor or replies are being written
  std::string violation_;  // set on the storage executor when the decoder fails
  ReplyBatch replies_;
  size_t write_offset_ = 0;
  size_t next_fd_ = 0;
};

}  // namespace atraced
