// One connection to the daemon: a non-blocking socket, an output buffer, the frame decoder
// and the FIFO of descriptors received with SCM_RIGHTS. It knows framing and reply order,
// not what the requests mean; the client layer (client.h) gives them meaning.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/proto/frame_decoder.h"
#include "deadline.h"
#include "fd.h"

namespace atrace_client_internal {

// A reply, matched to the request it answers. `tag` is what the caller passed to Queue().
struct Reply {
  uint16_t opcode = 0;
  uint64_t tag = 0;
  int32_t status = 0;
  std::string message;
  std::vector<uint8_t> body;
  Fd fd;  // FILE_GET_FD on success: the descriptor that came with the frame
};

class Connection {
 public:
  // Connects to `path`, sends HELLO asking for `features`, and waits for the reply, all
  // before `deadline`. Returns 0 or -errno (a refused HELLO returns its status).
  static int Open(const std::string& path, uint64_t features, const atraced::proto::LabelsRequest& labels, const Deadline& deadline,
                  std::unique_ptr<Connection>* out, std::string* message);

  pid_t owner_pid() const { return owner_pid_; }
  uint64_t granted_features() const { return hello_.features; }

  // Appends a request frame to the output buffer; its reply will carry `tag`.
  void Queue(uint16_t opcode, const std::vector<uint8_t>& payload, uint64_t tag);
  // FILE_APPEND, its data copied once, straight into the send buffer.
  void QueueAppend(const atraced::proto::FileAppend& m, uint64_t tag);

  // Replies expected but not yet received.
  size_t outstanding() const { return expected_.size(); }
  bool has_unsent() const { return sent_ < out_.size(); }

  // Sends buffered requests and receives replies into the inbox until everything is sent
  // and at most `max_outstanding` replies are still expected. With wait == false it makes
  // one pass that never blocks. Returns 0, -ETIMEDOUT, -ECONNRESET (the daemon hung up)
  // or -EPROTO (the daemon broke the protocol). After an error the connection is unusable.
  int Pump(const Deadline& deadline, size_t max_outstanding, bool wait = true);

  // Received replies, oldest first.
  std::deque<Reply>& inbox() { return inbox_; }

  // With nothing outstanding, true if the daemon has hung up (or sent unasked-for bytes):
  // the connection must be replaced before use.
  bool LooksDead();

 private:
  explicit Connection(Fd fd);
  int SendSome();
  int ReceiveSome();
  int DecodeFrames();

  struct Expected {
    uint16_t opcode;
    uint32_t request_id;
    uint64_t tag;
  };

  Fd fd_;
  pid_t owner_pid_;
  atraced::proto::HelloReply hello_;
  uint32_t next_request_id_ = 1;
  std::vector<uint8_t> out_;
  size_t sent_ = 0;
  std::deque<Expected> expected_;
  std::deque<Reply> inbox_;
  std::deque<Fd> fds_;  // received descriptors, in arrival order
  std::unique_ptr<atraced::proto::FrameDecoder> decoder_;
};

}  // namespace atrace_client_internal
