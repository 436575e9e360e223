#include "later_reply.h"

#include <utility>
#include <vector>

namespace atraced {

void SendLateReply(Client* to, uint16_t opcode, uint32_t request_id, const Status& reply, ServiceCounters& counters,
                   std::span<const uint8_t> ok_body) {
  if (!reply.ok()) ++counters.requests_refused;
  if (to == nullptr || !to->reply_sink) return;
  std::vector<uint8_t> body;
  if (!reply.ok()) {
    proto::EncodeReplyError(reply, body);
  } else {
    proto::EncodeReplyOk(body);
    body.insert(body.end(), ok_body.begin(), ok_body.end());
  }
  ReplyBatch batch;
  proto::AppendFrame(batch.bytes, opcode, ATR_FLAG_REPLY, request_id, body);
  to->reply_sink(std::move(batch));
}

LaterReply::LaterReply(ClientTable& clients, ClientId id, uint16_t opcode, uint32_t request_id,
                       ServiceCounters& counters)
    : clients_(clients), counters_(counters), id_(id), opcode_(opcode), request_id_(request_id) {}

std::function<void(Status)> LaterReply::Take() {
  // Made only when a handler hands its reply on: most requests never do, and this runs for
  // every request.
  state_ = std::make_shared<State>();
  state_->clients = &clients_;
  state_->counters = &counters_;
  state_->id = id_;
  state_->opcode = opcode_;
  state_->request_id = request_id_;
  state_->taken = true;
  return [state = state_](Status reply) {
    if (!state->settled) {
      state->answered = true;
      state->early = std::move(reply);
      return;
    }
    SendLateReply(state->clients->Find(state->id), state->opcode, state->request_id, reply, *state->counters);
  };
}

std::optional<Status> LaterReply::Settle(Status from_handler) {
  if (!state_) return from_handler;  // never handed on
  state_->settled = true;
  if (!from_handler.ok()) return from_handler;  // refused before
  if (state_->answered) return std::move(state_->early);
  return std::nullopt;
}

}  // namespace atraced
