// The daemon's descriptor budget: how many descriptors its clients may make it hold, in
// total and per uid, so that one user cannot starve the others (issue 14, defect 1).
//
// The soft RLIMIT_NOFILE (raised to the hard limit at start-up) is split in two:
//   - a reserve the daemon keeps for itself: its baseline (listening socket, event loop,
//     trace directory, journal), the process-directory cache, the order log's rewrite, the
//     remover's walk and the accept of a connection it is about to shed. Nothing a client
//     does is charged against it, so accept, recovery, order-log rewrites and aging never
//     fail for want of a descriptor;
//   - the budget for clients. Each connection, each open trace file and each descriptor
//     waiting to be passed in a reply costs one, charged to the peer's uid. One uid holds
//     at most `uid-descriptor-share` percent of the budget (25 by default), so one user with
//     any number of connections leaves at least three quarters of it to everyone else.
//
// A charge is an FdCharge, released when it is destroyed: it lives beside the descriptor it
// pays for. Single owner (the event loop), no locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>


namespace atraced {

class FdBudget {
 public:
  // Descriptors kept out of the client budget, on top of the process-directory cache.
  static constexpr uint64_t kBaseReserve = 64;
  // A refusal is logged at most once per interval per uid.

  struct Plan {
    uint64_t limit = 0;    // the soft RLIMIT_NOFILE
    uint64_t reserve = 0;  // kept for the daemon itself
    uint64_t budget = 0;   // for all clients together
    uint64_t per_uid = 0;  // for the clients of one uid
  };
  // The split of `limit` descriptors. Below 4 * (kBaseReserve + dir_cache) the reserve is
  // three quarters of the limit, so a tiny limit still leaves clients something.
  static Plan MakePlan(uint64_t limit, uint32_t uid_share_percent, uint64_t dir_cache);

  enum class Verdict { kOk, kUidShare, kExhausted };

  explicit FdBudget(Plan plan) : plan_(plan) {}
  const Plan& plan() const { return plan_; }

  // Charges one descriptor to `uid`, or says why not.
  Verdict TryCharge(uint32_t uid);
  void Release(uint32_t uid);
  uint64_t held(uint32_t uid) const;
  uint64_t total() const { return total_; }
  // Each uid that holds descriptors, with how many (for STATUS).
  const std::unordered_map<uint32_t, uint64_t>& by_uid() const { return held_; }

  // Reasons for a log line or an error reply.
  std::string Describe(Verdict v, uint32_t uid) const;

 private:
  Plan plan_;
  uint64_t total_ = 0;
  std::unordered_map<uint32_t, uint64_t> held_;
};

// One descriptor charged to a uid; released when destroyed or Reset(). Move-only.
class FdCharge {
 public:
  FdCharge() = default;
  // Charges `budget` (nullptr: nothing to charge, always ok) for `uid`.
  static FdCharge Take(FdBudget* budget, uint32_t uid, FdBudget::Verdict* verdict);
  FdCharge(FdCharge&& o) noexcept : budget_(o.budget_), uid_(o.uid_) { o.budget_ = nullptr; }
  FdCharge& operator=(FdCharge&& o) noexcept {
    if (this != &o) {
      Reset();
      budget_ = o.budget_;
      uid_ = o.uid_;
      o.budget_ = nullptr;
    }
    return *this;
  }
  FdCharge(const FdCharge&) = delete;
  FdCharge& operator=(const FdCharge&) = delete;
  ~FdCharge() { Reset(); }
  void Reset() {
    if (budget_ != nullptr) budget_->Release(uid_);
    budget_ = nullptr;
  }

 private:
  FdCharge(FdBudget* budget, uint32_t uid) : budget_(budget), uid_(uid) {}
  FdBudget* budget_ = nullptr;
  uint32_t uid_ = 0;
};

}  // namespace atraced
