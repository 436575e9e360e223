#include "atraced/admission/fd_budget.h"

#include <algorithm>

namespace atraced {

FdBudget::Plan FdBudget::MakePlan(uint64_t limit, uint32_t uid_share_percent, uint64_t dir_cache) {
  Plan p;
  p.limit = limit;
  p.reserve = std::min<uint64_t>(kBaseReserve + dir_cache, limit - limit / 4);
  p.budget = limit - p.reserve;
  p.per_uid = std::max<uint64_t>(1, p.budget * std::min<uint32_t>(uid_share_percent, 100) / 100);
  return p;
}

FdBudget::Verdict FdBudget::TryCharge(uint32_t uid) {
  if (total_ >= plan_.budget) return Verdict::kExhausted;
  uint64_t& mine = held_[uid];
  if (mine >= plan_.per_uid) return Verdict::kUidShare;
  ++mine;
  ++total_;
  return Verdict::kOk;
}

void FdBudget::Release(uint32_t uid) {
  auto it = held_.find(uid);
  if (it == held_.end() || it->second == 0) return;
  if (--it->second == 0) held_.erase(it);
  --total_;
}

uint64_t FdBudget::held(uint32_t uid) const {
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : it->second;
}

std::string FdBudget::Describe(Verdict v, uint32_t uid) const {
  if (v == Verdict::kUidShare) {
    return "uid " + std::to_string(uid) + " holds " + std::to_string(held(uid)) + " daemon descriptors, its share (" +
           std::to_string(plan_.per_uid) + " of " + std::to_string(plan_.budget) + ", uid-descriptor-share)";
  }
  return "the daemon's descriptor budget for clients (" + std::to_string(plan_.budget) + " of " +
         std::to_string(plan_.limit) + ", " + std::to_string(plan_.reserve) + " reserved) is in use";
}

FdCharge FdCharge::Take(FdBudget* budget, uint32_t uid, FdBudget::Verdict* verdict) {
  *verdict = FdBudget::Verdict::kOk;
  if (budget == nullptr) return FdCharge();
  *verdict = budget->TryCharge(uid);
  return *verdict == FdBudget::Verdict::kOk ? FdCharge(budget, uid) : FdCharge();
}

}  // namespace atraced
