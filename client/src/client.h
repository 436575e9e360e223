// The state behind the opaque C handles, and the operations the C entry points call with
// the handle's mutex held. Functions return 0 or -errno and never throw past c_api.cc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "atraced/atrace_client.h"
#include "atraced/proto/codec.h"
#include "connection.h"

namespace atrace_client_internal {

// One asynchronous event in flight: how many of its replies are still to come.
struct AsyncEvent {
  uint64_t tag;
  size_t replies_left;
  bool failed;
};

}  // namespace atrace_client_internal

struct atrace_client {
  std::mutex mu;
  std::vector<std::string> socket_paths;
  int connect_timeout_ms = ATRACE_DEFAULT_CONNECT_TIMEOUT_MS;
  int io_timeout_ms = ATRACE_DEFAULT_IO_TIMEOUT_MS;
  unsigned max_in_flight = ATRACE_DEFAULT_MAX_IN_FLIGHT;
  uint64_t features = ATR_FEATURE_FD_PASSING;
  // The job, rank and world size of this process's environment, read at open and sent
  // (LABELS) on every connection whose HELLO grants ATR_FEATURE_LABELS.
  atraced::proto::LabelsRequest labels;  // and ATRACE_HANG_TIMEOUT, sent where the daemon grants it

  std::unique_ptr<atrace_client_internal::Connection> conn;
  // Bumped whenever a connection is dropped: events and files remember the generation
  // they were opened in, so a handle from a dead connection is recognised as lost.
  uint64_t generation = 1;
  uint32_t next_object_id = 1;  // event and file ids, chosen by us (PROTOCOL.md)
  uint64_t next_async_tag = 1;  // tag 0 marks synchronous requests
  std::deque<atrace_client_internal::AsyncEvent> async;
  int async_first_error = 0;
  std::string last_message;
  atrace_client_stats stats{};
};

struct atrace_file;

struct atrace_event {
  atrace_client* client;
  uint64_t generation;
  uint32_t id;
  std::string path;
  std::vector<atrace_file*> files;  // still open, so END can mark them closed
};

struct atrace_file {
  atrace_client* client;
  atrace_event* event;  // null once the event ended (the daemon closed the file then)
  uint64_t generation;
  uint32_t id;
  std::string path;
  atrace_client_internal::Fd fd;  // from FILE_GET_FD, if fetched
};

namespace atrace_client_internal {

// Validates what can be checked without the daemon, for a useful -EINVAL before anything
// is sent. Name rules themselves are left to the daemon, whose message names the field.
int CheckEventSpec(const atrace_event_spec& spec, std::string* why);
int CheckFileSpec(const atrace_file_spec& spec, std::string* why);

// Resolves candidate paths and connects (HELLO included) to the first that answers.
int Connect(atrace_client& c);
// Makes the handle ready for a new call: a fork child drops the inherited connection, a
// connection the daemon hung up on is replaced, and a missing one is opened.
int Ready(atrace_client& c);
// In a fork child, forgets the parent's connection and asynchronous state.
void ForgetIfForked(atrace_client& c);
// Forgets the connection; asynchronous events in flight count as failed with `why`.
void Drop(atrace_client& c, int why);

// Sends what is queued with tag 0 (plus anything asynchronous before it), waits for every
// reply, accounts asynchronous ones, and returns the synchronous replies in order.
// Drops the connection on a transport error and returns it.
int Transact(atrace_client& c, std::vector<Reply>* replies);
// Takes replies of asynchronous events out of the inbox and counts them.
void AccountAsync(atrace_client& c);

// First refused status among `replies` (0 if none); sets c.last_message from it.
int FirstError(atrace_client& c, const std::vector<Reply>& replies);

// Queues BEGIN, OPEN, APPEND chunks (none for len 0), CLOSE and END; returns the number
// of requests queued. With via_fd, only BEGIN, OPEN and GET_FD.
size_t QueueEvent(atrace_client& c, uint64_t tag, const atrace_event_spec& ev, const atrace_file_spec& file,
                  const uint8_t* data, size_t len, uint32_t event_id, uint32_t file_id, bool via_fd);
void QueueAppends(atrace_client& c, uint64_t tag, uint32_t file_id, const uint8_t* data, size_t len);
void QueueId(atrace_client& c, uint16_t opcode, uint32_t id, uint64_t tag);
uint32_t NextObjectId(atrace_client& c);

// atrace_client_open asking HELLO for `extra_features` too: for libascend_trace, which
// links this code in privately (the device receivers' DEVICE_STATS); not in the C ABI.
int OpenWithFeatures(const atrace_client_options* options, uint64_t extra_features, atrace_client** out);
// DEVICE_STATS, one round trip. -ENOTSUP if the daemon did not grant ATR_FEATURE_DEVICE_STATS.
int SendDeviceStats(atrace_client& c, const atraced::proto::DeviceStats& delta);

// Writes all of data to a descriptor, retrying short writes and EINTR.
int WriteAll(int fd, const uint8_t* data, size_t len);

}  // namespace atrace_client_internal
