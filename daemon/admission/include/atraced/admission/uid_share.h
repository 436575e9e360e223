// A pool the daemon shares between users, and each uid's share of it (issue 21): the
// connections it serves, the rings it holds and their memory. The rule is the descriptor
// budget's (fd_budget.h): one uid holds at most `share_percent` of the pool, root and the
// daemon's own uid included, so one user with any number of processes leaves the rest to
// everyone else. Units are the pool's own (connections, rings, bytes).
//
// A charge is a UidCharge, released when destroyed: it lives beside what it pays for.
// Single owner (the event loop), no locks.
#pragma once

#include <cstdint>
#include <map>
#include <string>


namespace atraced {

class UidShare {
 public:
  enum class Verdict { kOk, kUidShare, kExhausted };

  // `name` and `unit` make the messages ("rings", "ring"); `share_key` names the
  // configuration key of the share in them ("uid-ring-share").
  UidShare(std::string name, std::string unit, std::string share_key, uint64_t limit, uint32_t share_percent);

  uint64_t limit() const { return limit_; }
  uint64_t per_uid() const { return per_uid_; }
  uint64_t total() const { return total_; }
  uint64_t held(uint32_t uid) const;
  // Each uid that holds something, with what it holds (ascending uid).
  const std::map<uint32_t, uint64_t>& by_uid() const { return held_; }

  // Charges `amount` to `uid`, or says why not (nothing is charged then).
  Verdict TryTake(uint32_t uid, uint64_t amount);
  // Charges `amount` to `uid` whatever the limits say: for what must not be refused (a
  // crash's or a death's last words), which still counts against the uid's later charges.
  void Force(uint32_t uid, uint64_t amount);
  void Release(uint32_t uid, uint64_t amount);
  // A new limit (SIGHUP): what is held stays held; only new charges see it.
  void SetLimit(uint64_t limit, uint32_t share_percent);

  // The reason for a refusal of `amount` more, for a log line and an error reply.
  std::string Describe(Verdict v, uint32_t uid, uint64_t amount) const;

 private:
  std::string name_, unit_, share_key_;
  uint64_t limit_ = 0;
  uint32_t share_percent_ = 100;
  uint64_t per_uid_ = 0;
  uint64_t total_ = 0;
  std::map<uint32_t, uint64_t> held_;
};

// `amount` of a UidShare charged to one uid; released when destroyed or Reset(). Move-only.
class UidCharge {
 public:
  UidCharge() = default;
  // Charges `pool` (nullptr: nothing to charge, always ok).
  static UidCharge Take(UidShare* pool, uint32_t uid, uint64_t amount, UidShare::Verdict* verdict);
  // Charges `pool` past its limits if need be (UidShare::Force).
  static UidCharge Force(UidShare* pool, uint32_t uid, uint64_t amount);
  UidCharge(UidCharge&& o) noexcept : pool_(o.pool_), uid_(o.uid_), amount_(o.amount_) { o.pool_ = nullptr; }
  UidCharge& operator=(UidCharge&& o) noexcept {
    if (this != &o) {
      Reset();
      pool_ = o.pool_;
      uid_ = o.uid_;
      amount_ = o.amount_;
      o.pool_ = nullptr;
    }
    return *this;
  }
  UidCharge(const UidCharge&) = delete;
  UidCharge& operator=(const UidCharge&) = delete;
  ~UidCharge() { Reset(); }
  void Reset() {
    if (pool_ != nullptr) pool_->Release(uid_, amount_);
    pool_ = nullptr;
  }
  uint64_t amount() const { return pool_ ? amount_ : 0; }

 private:
  UidCharge(UidShare* pool, uint32_t uid, uint64_t amount) : pool_(pool), uid_(uid), amount_(amount) {}
  UidShare* pool_ = nullptr;
  uint32_t uid_ = 0;
  uint64_t amount_ = 0;
};

}  // namespace atraced
