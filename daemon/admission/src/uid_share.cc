#include "atraced/admission/uid_share.h"

#include <algorithm>
#include <utility>

namespace atraced {

UidShare::UidShare(std::string name, std::string unit, std::string share_key, uint64_t limit, uint32_t share_percent)
    : name_(std::move(name)), unit_(std::move(unit)), share_key_(std::move(share_key)) {
  SetLimit(limit, share_percent);
}

void UidShare::SetLimit(uint64_t limit, uint32_t share_percent) {
  limit_ = limit;
  share_percent_ = std::clamp<uint32_t>(share_percent, 1, 100);
  // At least one of the unit each, so a tiny pool still serves every user once.
  per_uid_ = std::max<uint64_t>(1, limit_ / 100 * share_percent_ + limit_ % 100 * share_percent_ / 100);
}

uint64_t UidShare::held(uint32_t uid) const {
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : it->second;
}

UidShare::Verdict UidShare::TryTake(uint32_t uid, uint64_t amount) {
  const uint64_t mine = held(uid);
  if (amount > per_uid_ || mine > per_uid_ - amount) return Verdict::kUidShare;
  if (amount > limit_ || total_ > limit_ - amount) return Verdict::kExhausted;
  held_[uid] = mine + amount;
  total_ += amount;
  return Verdict::kOk;
}

void UidShare::Force(uint32_t uid, uint64_t amount) {
  held_[uid] += amount;
  total_ += amount;
}

void UidShare::Release(uint32_t uid, uint64_t amount) {
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  const uint64_t taken = std::min(amount, it->second);
  it->second -= taken;
  total_ -= taken;
  if (it->second == 0) held_.erase(it);
}

std::string UidShare::Describe(Verdict v, uint32_t uid, uint64_t amount) const {
  const std::string more = amount == 1 ? "one more " + unit_ : std::to_string(amount) + " more " + unit_ + "s";
  if (v == Verdict::kUidShare) {
    return "uid " + std::to_string(uid) + " holds " + std::to_string(held(uid)) + " of its share of " + name_ + " (" +
           std::to_string(per_uid_) + " of " + std::to_string(limit_) + ", " + share_key_ + " " +
           std::to_string(share_percent_) + "%); " + more + " would pass it";
  }
  return "the daemon holds " + std::to_string(total_) + " " + name_ + " of its limit " + std::to_string(limit_) + "; " +
         more + " would pass it";
}

UidCharge UidCharge::Take(UidShare* pool, uint32_t uid, uint64_t amount, UidShare::Verdict* verdict) {
  *verdict = UidShare::Verdict::kOk;
  if (pool == nullptr) return UidCharge();
  *verdict = pool->TryTake(uid, amount);
  return *verdict == UidShare::Verdict::kOk ? UidCharge(pool, uid, amount) : UidCharge();
}

UidCharge UidCharge::Force(UidShare* pool, uint32_t uid, uint64_t amount) {
  if (pool == nullptr) return UidCharge();
  pool->Force(uid, amount);
  return UidCharge(pool, uid, amount);
}

}  // namespace atraced
