#include "rings.h"

#include <map>
#include <string>
#include <vector>

#include "atraced/processes/signal_names.h"

namespace atraced {

Status Rings::OnRingRegister(Client& c, std::span<const uint8_t> payload, UniqueFd memfd) {
  proto::RingRegister m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  // Logged by the dispatcher, through the refusal throttle; the message names the ring.
  auto refuse = [this, &m](int err, const std::string& why) {
    ++counters_.rings_refused;
    return Status::Error(err, "ring " + m.name + ": " + why, err == EBUSY ? Status::LogAs::kWarning : Status::LogAs::kNotice);
  };
  if ((m.flags & ATR_RING_COUNTER) && !(c.features & ATR_FEATURE_RING_COUNTER)) {
    return refuse(ENOTSUP, "flags: ATR_RING_COUNTER needs ATR_FEATURE_RING_COUNTER, not granted in HELLO");
  }
  if ((m.flags & ATR_RING_LEDGER) && !(c.features & ATR_FEATURE_LEDGER)) {
    return refuse(ENOTSUP, "flags: ATR_RING_LEDGER needs ATR_FEATURE_LEDGER, not granted in HELLO");
  }
  if (c.rings.count(m.object_id)) return refuse(EEXIST, "object_id: " + std::to_string(m.object_id) + " is already registered");
  if (c.rings.size() >= limits_.max_rings_per_client) {
    return refuse(EBUSY, "rings: this connection already holds " + std::to_string(c.rings.size()) + " rings, the limit");
  }
  // Charged before anything is mapped: one user's rings cannot take another's room.
  UidShare::Verdict verdict;
  UidCharge slot = UidCharge::Take(&slots_, c.peer.uid, 1, &verdict);
  if (verdict != UidShare::Verdict::kOk) return refuse(EBUSY, "rings: " + slots_.Describe(verdict, c.peer.uid, 1));
  const uint64_t cost = HeldRing::MemoryCost(m);
  UidCharge memory = UidCharge::Take(&memory_, c.peer.uid, cost, &verdict);
  if (verdict != UidShare::Verdict::kOk) {
    return refuse(EBUSY, "ring memory: " + memory_.Describe(verdict, c.peer.uid, cost));
  }
  auto ring = HeldRing::Map(std::move(memfd), m,
                            deps_.ring_unmapper ? *deps_.ring_unmapper : InlineUnmapper::Instance(),
                            deps_.counter_clock);
  if (!ring.ok()) return refuse(ring.status().err(), ring.status().message());
  c.rings.emplace(m.object_id, ClientRing{std::move(*ring), std::move(slot), std::move(memory)});
  CountHolder(c);
  // The process's local time, for the names of its directories (ProcessRecord::name_settled).
  if (!c.utc_offset_s) c.utc_offset_s = m.utc_offset_s;
  return Status::Ok();
}

void Rings::CountHolder(Client& c) {
  const bool holds = !c.rings.empty();
  if (holds == c.counted_ring_holder) return;
  c.counted_ring_holder = holds;
  ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks);
  if (rec == nullptr) return;
  if (holds) {
    ++rec->ring_holders;
  } else if (rec->ring_holders > 0) {
    --rec->ring_holders;
  }
}

void Rings::DropRing(Client& c, std::map<uint32_t, ClientRing>::iterator it) {
  c.released.erase(it->first);
  c.rings.erase(it);  // its charges go with it
  CountHolder(c);
}

Status Rings::OnRingRelease(Client& c, std::span<const uint8_t> payload) {
  proto::IdRequest m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return st;
  auto it = c.rings.find(m.id);
  if (it == c.rings.end() || c.released.count(m.id)) {
    return Status::Error(ENOENT, "object_id: " + std::to_string(m.id) + " is not registered");
  }
  if (it->second.ring.exit_save()) {
    c.released.emplace(m.id, ++c.releases);  // CANN saves destroyed exitSave objects at exit too
  } else {
    DropRing(c, it);
  }
  return Status::Ok();
}

void Rings::OnRingReport(Client& c, std::span<const uint8_t> payload, DeferredReply reply) {
  proto::RingReport m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return reply.Answer(std::move(st));
  std::vector<const HeldRing*> chosen;
  for (uint32_t id : m.object_ids) {
    auto it = c.rings.find(id);
    if (it == c.rings.end() || c.released.count(id)) {
      return reply.Answer(Status::Error(ENOENT, "object_id: " + std::to_string(id) + " is not registered"));
    }
    chosen.push_back(&it->second.ring);
  }
  // Written before the reply either way: `wait` only tells the client whether to wait.
  if (Status refused = admission_.AdmitEvent(c, EventKind::kSchedule); !refused.ok()) {
    return reply.Answer(std::move(refused));
  }
  saver_.Save(c, EventKind::kSchedule, chosen, {}, AnswerWith(std::move(reply)));
}

void Rings::OnRingSaveAll(Client& c, std::span<const uint8_t> payload, DeferredReply reply) {
  proto::RingSaveAll m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return reply.Answer(std::move(st));
  const std::vector<const HeldRing*> chosen = RingSaver::Unreleased(c);
  if (Status refused = admission_.AdmitEvent(c, EventKind::kSchedule); !refused.ok()) {
    return reply.Answer(std::move(refused));
  }
  saver_.Save(c, EventKind::kSchedule, chosen, {}, AnswerWith(std::move(reply)));
}

void Rings::OnGoodbye(Client& c, std::span<const uint8_t> payload, DeferredReply reply) {
  proto::Goodbye m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return reply.Answer(std::move(st));
  if (c.goodbye) return reply.Answer(Status::Error(EPROTO, "GOODBYE: already said on this connection"));
  c.goodbye = true;
  // exitSave objects, live or destroyed, one per name as CANN picks (RingSaver::AtExit).
  const std::vector<const HeldRing*> chosen = RingSaver::AtExit(c);
  if (Status refused = admission_.AdmitEvent(c, EventKind::kExit); !refused.ok()) {
    reply.Answer(std::move(refused));
  } else {
    saver_.Save(c, EventKind::kExit, chosen, {}, AnswerWith(std::move(reply)));
  }
  ReleaseAll(c);  // the process is leaving: its rings are of no further use (a save holds its own)
}

void Rings::OnDump(Client& c, std::span<const uint8_t> payload, DeferredReply reply) {
  proto::Dump m;
  if (Status st = proto::Decode(payload, &m); !st.ok()) return reply.Answer(std::move(st));
  // Sent on the crash connection, which holds no ring: the rings are another connection's.
  Client* holder = clients_.RingHolderOf(c);
  const std::vector<const HeldRing*> chosen = holder ? RingSaver::Unreleased(*holder) : std::vector<const HeldRing*>{};
  if (holder == nullptr || holder->rings.empty()) {  // a ledger alone is saved too
    return reply.Answer(Status::Error(ENOENT, "DUMP: no connection of pid " + std::to_string(c.peer.pid) +
                                                  " holds an unreleased ring: there is nothing to save"));
  }
  if (Status refused = admission_.AdmitEvent(*holder, EventKind::kSchedule); !refused.ok()) {
    return reply.Answer(std::move(refused));
  }
  // Logged: a signal from outside the process asked for it, not the application.
  saver_.Save(*holder, EventKind::kSchedule, chosen, {},
              [this, reply = SharedReply(std::move(reply)), pid = c.peer.pid, program = holder->program, m,
               n = chosen.size()](Status r) {
                log_.Info("pid ", pid, " (", program, ") caught dump signal ", SignalName(m.signo), " in thread ", m.tid,
                          "; schedule dir with ", n, " ring(s)", !r.ok() ? " failed: " + r.message() : std::string(" written"));
                reply->Answer(std::move(r));
              });
}

void Rings::ReleaseAll(Client& c) {
  c.rings.clear();  // their mappings and charges go with the client
  c.released.clear();
  CountHolder(c);
}

}  // namespace atraced
