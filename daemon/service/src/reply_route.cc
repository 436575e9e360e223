#include "reply_route.h"

#include <utility>

#include "atraced/proto/wire.h"

namespace atraced {

DeferredReply DispatchRoute::Begin(ClientId id, const proto::FrameHeader& h) {
  handling_ = true;
  now_.reset();
  now_body_.clear();
  return DeferredReply(shared_from_this(), {id, h.opcode, h.request_id, ++handled_});
}

std::optional<Status> DispatchRoute::End(std::vector<uint8_t>& body) {
  handling_ = false;
  if (now_ && now_->ok()) body.insert(body.end(), now_body_.begin(), now_body_.end());
  std::optional<Status> answer = std::move(now_);
  now_.reset();
  return answer;
}

void DispatchRoute::Deliver(const ReplyAddress& to, const Status& reply, std::span<const uint8_t> ok_body) {
  if (handling_ && to.handling == handled_) {
    // The dispatcher still handles the request (the work was refused, or finished at once):
    // the answer goes with the batch, refusals logged there.
    now_ = reply;
    now_body_.assign(ok_body.begin(), ok_body.end());
    return;
  }
  if (!reply.ok()) ++counters_.requests_refused;
  Client* c = clients_.Find(to.client);
  if (c == nullptr || !c->reply_sink) return;  // the connection is gone
  std::vector<uint8_t> body;
  if (!reply.ok()) {
    proto::EncodeReplyError(reply, body);
  } else {
    proto::EncodeReplyOk(body);
    body.insert(body.end(), ok_body.begin(), ok_body.end());
  }
  ReplyBatch batch;
  proto::AppendFrame(batch.bytes, to.opcode, ATR_FLAG_REPLY, to.request_id, body);
  c->reply_sink(std::move(batch));
}

}  // namespace atraced
