// Replies that come after their handler returned: a save on the I/O workers (ring_saver.h)
// or a CRASH inspected off the loop (crashes.h). The connection's session handles none of
// its later requests until the reply comes (ReplyBatch::deferred), so replies stay in
// request order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "atraced/proto/codec.h"
#include "atraced/service/service_types.h"
#include "client.h"
#include "client_table.h"
#include "atraced/base/status.h"

namespace atraced {

// Encodes `reply` to the request (`opcode`, `request_id`) and sends it through the client's
// reply sink, if the client is still connected and has one. `ok_body` follows the reply head
// of a success.
void SendLateReply(Client* to, uint16_t opcode, uint32_t request_id, const Status& reply, ServiceCounters& counters,
                   std::span<const uint8_t> ok_body = {});

// One request's reply, which its handler may hand to work that finishes later. The handler
// passes Take()'s callback on (at most once); the dispatcher then calls Settle with what the
// handler returned. A callback called before Settle gives the reply at once (the work ran
// inline, or was refused); one called after it sends the reply through the reply sink.
class LaterReply {
 public:
  LaterReply(ClientTable& clients, ClientId id, uint16_t opcode, uint32_t request_id, ServiceCounters& counters);

  std::function<void(Status)> Take();
  // The reply to send now, or nullopt when it comes later (the request is deferred).
  std::optional<Status> Settle(Status from_handler);

 private:
  struct State {
    ClientTable* clients = nullptr;
    ServiceCounters* counters = nullptr;
    ClientId id = 0;
    uint16_t opcode = 0;
    uint32_t request_id = 0;
    bool taken = false;
    bool settled = false;
    bool answered = false;  // the callback ran before Settle
    Status early;
  };
  ClientTable& clients_;
  ServiceCounters& counters_;
  ClientId id_;
  uint16_t opcode_;
  uint32_t request_id_;
  std::shared_ptr<State> state_;  // made by Take
};

}  // namespace atraced
