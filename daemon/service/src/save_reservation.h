// What one save holds while its files are written (ring_saver.h): the most its files can
// take (`bound`) counted against the process's max-bytes-per-client (Admission), charged to
// its uid's share of queued save bytes (uid-queued-share), and, once the store made room for
// it, held in the store's byte limits (TraceStore::Reserve). One object takes them and gives
// them back together: Settle(written) returns what the files did not take; a reservation
// destroyed unsettled (a save refused on the way, or dropped) returns everything.
#pragma once

#include <cstdint>

#include "admission.h"
#include "atraced/admission/uid_share.h"
#include "atraced/base/status.h"
#include "atraced/store/names.h"
#include "atraced/store/trace_store.h"
#include "client.h"

namespace atraced {

class SaveReservation {
 public:
  SaveReservation() = default;
  SaveReservation(SaveReservation&& other) noexcept { *this = std::move(other); }
  SaveReservation& operator=(SaveReservation&& other) noexcept;
  SaveReservation(const SaveReservation&) = delete;
  SaveReservation& operator=(const SaveReservation&) = delete;
  ~SaveReservation() { Settle(0); }

  // Reserves `bound` bytes for a save of `kind` by `c`: refused (-EBUSY) past the process's
  // max-bytes-per-client, and for a schedule save (-EAGAIN) past the uid's share of `queued`
  // (last words are charged, never refused: they are not asked twice). Nothing is held when
  // it refuses.
  static Status Take(Admission& admission, UidShare& queued, const Client& c, EventKind kind, uint64_t bound,
                     SaveReservation* out);
  // The store made room for the bytes: its byte limits hold them from here on.
  void HoldInStore(TraceStore& store);
  // The save is over, `written` of its bytes on disk (count them in the store after this):
  // the rest goes back, everywhere at once. Nothing is held afterwards.
  void Settle(uint64_t written);

  uint64_t bytes() const { return bound_; }

 private:
  Admission* admission_ = nullptr;  // null: nothing held
  TraceStore* store_ = nullptr;     // set by HoldInStore
  int32_t pid_ = 0;                 // whose max-bytes-per-client count holds the bytes
  uint64_t start_ticks_ = 0;
  uint64_t bound_ = 0;
  UidCharge queued_;
};

}  // namespace atraced
