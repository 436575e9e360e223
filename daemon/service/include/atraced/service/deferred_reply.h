// The one way a handler answers a request after it returned (modelled on Perfetto's
// ipc::Deferred<T>): a move-only DeferredReply that must be answered exactly once.
//
// The dispatcher makes one for each request whose reply may wait (a save on the I/O workers,
// a CRASH inspected on the crash runner's thread) and hands it to the handler, which passes
// it on to the work. Whoever finishes calls Answer, on the event loop. An answer given while
// the dispatcher still handles the request joins that request's batch; a later one goes to
// the connection through its reply sink, and the session, which handled none of the
// connection's later requests meanwhile, sends it and reads on.
//
// Exactly once: a second Answer, or a DeferredReply destroyed unanswered while the service
// runs, is a bug. Debug builds stop on it (assert). Release builds ignore a second answer
// and answer a dropped one with -EIO ("internal: ..."), so that the client is told rather
// than left waiting; once the service is stopping (ReplyRoute::Stop) a dropped one answers
// nothing, its connection being gone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "atraced/base/status.h"

namespace atraced {

// Which request an answer belongs to.
struct ReplyAddress {
  uint64_t client = 0;      // the connection (TraceService::ClientId)
  uint16_t opcode = 0;
  uint32_t request_id = 0;
  uint64_t handling = 0;    // the dispatcher's number for this handling of the request
};

// Where answers go: the dispatcher (trace_service.cc), or a test's recorder.
class ReplyRoute {
 public:
  virtual ~ReplyRoute() = default;
  // One answer for `to`; `ok_body` follows the reply head of a success.
  virtual void Deliver(const ReplyAddress& to, const Status& reply, std::span<const uint8_t> ok_body) = 0;
  // The service is going: answers from now on go nowhere, and a DeferredReply dropped
  // unanswered is no bug (its connection is gone with the service).
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

 private:
  bool stopped_ = false;
};

class DeferredReply {
 public:
  DeferredReply() = default;  // answers nothing: what a moved-from or answered one is
  DeferredReply(std::shared_ptr<ReplyRoute> route, const ReplyAddress& to) : route_(std::move(route)), to_(to) {}
  DeferredReply(DeferredReply&& other) noexcept : route_(std::move(other.route_)), to_(other.to_) {}
  DeferredReply& operator=(DeferredReply&& other) noexcept;
  DeferredReply(const DeferredReply&) = delete;
  DeferredReply& operator=(const DeferredReply&) = delete;
  ~DeferredReply();

  // Gives the reply: `reply` is the status, `ok_body` what a success carries after it.
  void Answer(Status reply, std::span<const uint8_t> ok_body = {});
  // Whether an answer is still owed.
  bool pending() const { return route_ != nullptr; }
  // The connection that asked.
  uint64_t client() const { return to_.client; }

 private:
  // A DeferredReply let go of unanswered: caught, as the header says.
  void Dropped();

  std::shared_ptr<ReplyRoute> route_;  // null once answered
  ReplyAddress to_;
};

// A std::function must be copyable, a DeferredReply is not: a callback that answers one
// holds it shared. It is still answered once: a second call is a second answer, caught.
inline std::shared_ptr<DeferredReply> SharedReply(DeferredReply reply) {
  return std::make_shared<DeferredReply>(std::move(reply));
}

// The callback of work whose only end is the reply (a save its client asked for).
inline std::function<void(Status)> AnswerWith(DeferredReply reply) {
  return [reply = SharedReply(std::move(reply))](Status r) { reply->Answer(std::move(r)); };
}

}  // namespace atraced
