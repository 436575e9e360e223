// A bare protocol client for tests: real socket, explicit frames, no library behaviour in
// the way. It can send garbage, half frames or pipelined batches, and reads replies with
// recvmsg so passed descriptors are collected.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/proto/codec.h"
#include "atraced/proto/frame_decoder.h"

namespace atraced::testing {

struct RawReply {
  proto::FrameHeader header;
  int32_t status = 0;
  std::string message;
  std::vector<uint8_t> body;
};

class RawClient {
 public:
  explicit RawClient(UniqueFd fd) : fd_(std::move(fd)) {}
  // Connects to a Unix socket path; nullopt if nobody listens.
  static std::optional<RawClient> Connect(const std::string& path);

  int fd() const { return fd_.get(); }
  bool SendRaw(const std::vector<uint8_t>& bytes);
  // Appends a request frame to the pending batch; Flush() sends the batch in one write.
  void Queue(uint16_t opcode, const std::vector<uint8_t>& payload);
  bool Flush();
  // Queue + Flush.
  bool Send(uint16_t opcode, const std::vector<uint8_t>& payload) {
    Queue(opcode, payload);
    return Flush();
  }
  // The next reply, or nullopt on timeout / hang-up / garbage.
  std::optional<RawReply> Read(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Send one request and read its reply.
  std::optional<RawReply> Call(uint16_t opcode, const std::vector<uint8_t>& payload);
  // One request with a descriptor on its first byte (RING_REGISTER's memfd), then its reply.
  std::optional<RawReply> CallWithFd(uint16_t opcode, const std::vector<uint8_t>& payload, int fd);
  // HELLO with the given features; true on status 0. `granted`, if given, receives the
  // features the daemon granted.
  bool Hello(uint64_t features = ATR_FEATURE_FD_PASSING, uint64_t* granted = nullptr);
  // True if the daemon closed the connection (reads EOF within the timeout).
  bool SeesHangUp(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Descriptors received so far, oldest first.
  std::deque<UniqueFd>& fds() { return fds_; }
  uint32_t last_request_id() const { return next_id_ - 1; }

  // Convenience: a whole host event with one file, as one pipelined batch.
  // Returns the file path from the FILE_OPEN reply, or "" with *error set.
  std::string Emit(uint8_t kind, const std::string& object, const std::string& content, std::string* error = nullptr,
                   uint8_t side = ATR_SIDE_HOST, uint32_t device_id = 0, int32_t host_pid = 0);

 private:
  bool ReadMore(std::chrono::milliseconds timeout);

  UniqueFd fd_;
  std::vector<uint8_t> pending_;
  uint32_t next_id_ = 1;
  uint32_t next_object_id_ = 1;
  std::unique_ptr<proto::FrameDecoder> decoder_ = std::make_unique<proto::FrameDecoder>();
  std::deque<UniqueFd> fds_;
};

// The requests tests build most: an event of `kind` with client id `event_id`, and an
// object file `name` (.txt, or .bin) with client id `file_id` in it.
inline proto::EventBegin BeginRequest(uint32_t event_id, uint8_t kind = ATR_EVENT_SCHEDULE) {
  proto::EventBegin b;
  b.event_id = event_id;
  b.kind = kind;
  return b;
}
inline proto::FileOpen ObjectFileRequest(uint32_t event_id, uint32_t file_id, std::string name, bool binary = false) {
  proto::FileOpen o;
  o.event_id = event_id;
  o.file_id = file_id;
  o.form = ATR_FILE_OBJECT;
  o.suffix = binary ? ATR_SUFFIX_BIN : ATR_SUFFIX_TXT;
  o.name = std::move(name);
  return o;
}

template <class M>
std::vector<uint8_t> Payload(const M& m) {
  std::vector<uint8_t> out;
  proto::Encode(m, out);
  return out;
}

// One file of an event that WriteEvent writes: how it is opened (its ids are WriteEvent's)
// and all it holds.
struct EventFile {
  proto::FileOpen open;
  std::string content;
};
// An event of `kind` with client id `event_id` holding `files`, each written through
// FILE_APPEND in pieces of 256 KiB, one request at a time. "" or why not.
std::string WriteEvent(RawClient& c, uint32_t event_id, uint8_t kind, std::vector<EventFile> files);
// The FILE_OPEN of a file of the stackcore form, as the daemon names its reports.
proto::FileOpen StackcoreFileRequest(const std::string& program, int32_t signo = 11);

}  // namespace atraced::testing
