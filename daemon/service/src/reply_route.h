// The dispatcher's ReplyRoute (atraced/service/deferred_reply.h): where the answer of a
// DeferredReply goes. Given while the dispatcher still handles its request, it joins that
// request's batch (End returns it); given later, it is encoded and sent through the
// connection's reply sink, if the connection is still there.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "atraced/base/status.h"
#include "atraced/proto/codec.h"
#include "atraced/service/deferred_reply.h"
#include "atraced/service/service_types.h"
#include "client_table.h"

namespace atraced {

class DispatchRoute final : public ReplyRoute, public std::enable_shared_from_this<DispatchRoute> {
 public:
  DispatchRoute(ClientTable& clients, ServiceCounters& counters) : clients_(clients), counters_(counters) {}

  // Starts handling a request whose reply may come later: the DeferredReply its handler gets.
  DeferredReply Begin(ClientId id, const proto::FrameHeader& h);
  // Ends that handling: the answer given meanwhile (a success's body appended to `body`), or
  // nullopt when the answer comes later, through the reply sink.
  std::optional<Status> End(std::vector<uint8_t>& body);

  void Deliver(const ReplyAddress& to, const Status& reply, std::span<const uint8_t> ok_body) override;

 private:
  ClientTable& clients_;
  ServiceCounters& counters_;
  uint64_t handled_ = 0;   // handlings begun so far: each DeferredReply's number
  bool handling_ = false;  // between Begin and End (the handling numbered handled_)
  std::optional<Status> now_;  // the answer given while handling
  std::vector<uint8_t> now_body_;
};

}  // namespace atraced
