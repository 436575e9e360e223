#include "save_reservation.h"

#include <utility>

namespace atraced {

SaveReservation& SaveReservation::operator=(SaveReservation&& other) noexcept {
  if (this != &other) {
    Settle(0);
    admission_ = std::exchange(other.admission_, nullptr);
    store_ = std::exchange(other.store_, nullptr);
    pid_ = other.pid_;
    start_ticks_ = other.start_ticks_;
    bound_ = std::exchange(other.bound_, 0);
    queued_ = std::move(other.queued_);
  }
  return *this;
}

Status SaveReservation::Take(Admission& admission, UidShare& queued, const Client& c, EventKind kind, uint64_t bound,
                             SaveReservation* out) {
  if (Status refused = admission.AdmitBytes(c, bound); !refused.ok()) return refused;
  SaveReservation r;
  if (kind == EventKind::kSchedule) {
    // A schedule save can be asked again; its uid waits for its own saves to land.
    UidShare::Verdict verdict;
    r.queued_ = UidCharge::Take(&queued, c.peer.uid, bound, &verdict);
    if (verdict != UidShare::Verdict::kOk) {
      return Status::Error(EAGAIN, "save: " + queued.Describe(verdict, c.peer.uid, bound));
    }
  } else {
    // Last words (an exit, a crash, a death) are never asked twice: charged, not refused.
    // They are bounded by what the uid may hold: its connections and its rings' memory.
    r.queued_ = UidCharge::Force(&queued, c.peer.uid, bound);
  }
  admission.CountBytes(c, bound);
  r.admission_ = &admission;
  r.pid_ = c.peer.pid;
  r.start_ticks_ = c.start_ticks;
  r.bound_ = bound;
  *out = std::move(r);
  return Status::Ok();
}

void SaveReservation::HoldInStore(TraceStore& store) {
  store_ = &store;
  store.Reserve(bound_);
}

void SaveReservation::Settle(uint64_t written) {
  if (admission_ == nullptr) return;
  queued_.Reset();
  if (store_ != nullptr) store_->Unreserve(bound_);  // before the written bytes are added: counted once
  admission_->ReturnBytes(pid_, start_ticks_, bound_ - std::min(bound_, written));
  admission_ = nullptr;
  store_ = nullptr;
  bound_ = 0;
}

}  // namespace atraced
