#include "atraced/service/deferred_reply.h"

#include <cassert>
#include <cerrno>
#include <utility>

namespace atraced {

DeferredReply& DeferredReply::operator=(DeferredReply&& other) noexcept {
  if (this != &other) {
    if (pending()) Dropped();  // the answer it owed would be lost
    route_ = std::move(other.route_);
    to_ = other.to_;
  }
  return *this;
}

DeferredReply::~DeferredReply() {
  if (pending()) Dropped();
}

void DeferredReply::Answer(Status reply, std::span<const uint8_t> ok_body) {
  assert(pending() && "DeferredReply answered twice, or after it was moved from");
  if (!pending()) return;  // release builds: the first answer stands
  std::shared_ptr<ReplyRoute> route = std::move(route_);  // answered from here on, even if Deliver re-enters
  if (!route->stopped()) route->Deliver(to_, reply, ok_body);
}

void DeferredReply::Dropped() {
  std::shared_ptr<ReplyRoute> route = std::move(route_);
  if (route->stopped()) return;  // the service is going, and its connections with it
  assert(false && "DeferredReply destroyed unanswered: its client would wait for ever");
  route->Deliver(to_, Status::Error(EIO, "internal: the daemon dropped this request without answering it"), {});
}

}  // namespace atraced
