#include "atraced/store/space_account.h"

namespace atraced {

void SpaceAccount::Resolve(const ByteLimits& limits, uint64_t available, TimePoint now) {
  limits_ = limits;
  resolved_ = true;
  Sample(available, 0, now);
}

void SpaceAccount::AddUse(AgeClass c, uint64_t bytes) {
  used_[static_cast<size_t>(c)] += bytes;
  used_total_ += bytes;
}

void SpaceAccount::SubUse(AgeClass c, uint64_t bytes) {
  // The total stays the sum of the classes: an over-count of one class takes nothing from another.
  uint64_t& u = used_[static_cast<size_t>(c)];
  const uint64_t taken = std::min(u, bytes);
  u -= taken;
  used_total_ -= taken;
}

void SpaceAccount::ForgetUse() {
  used_ = {};
  used_total_ = 0;
}

void SpaceAccount::Sample(uint64_t available, uint64_t still_freeing, TimePoint now) {
  free_sample_ = available;
  written_since_ = 0;
  // Deletes still running are not in the figure yet; they will be in a moment.
  freed_since_ = still_freeing;
  SampleFailed(now);
}

void SpaceAccount::SampleFailed(TimePoint now) {
  sampled_at_ = now;
  deletes_done_ = false;
}

uint64_t SpaceAccount::free_bytes() const {
  const uint64_t up = free_sample_ + freed_since_;
  return up > written_since_ ? up - written_since_ : 0;
}

void SpaceAccount::Hold(uint32_t uid, uint64_t bytes, bool listed) {
  held_by_uid_[uid] += bytes;
  held_total_ += bytes;
  if (listed) held_listed_ += bytes;
}

uint64_t SpaceAccount::Release(uint32_t uid, uint64_t bytes) {
  auto u = held_by_uid_.find(uid);
  if (u == held_by_uid_.end()) return 0;
  const uint64_t released = std::min(u->second, bytes);
  if ((u->second -= released) == 0) held_by_uid_.erase(u);
  held_total_ -= std::min(held_total_, released);
  return released;
}

uint64_t SpaceAccount::held_by(uint32_t uid) const {
  const auto u = held_by_uid_.find(uid);
  return u == held_by_uid_.end() ? 0 : u->second;
}

ByteNeed SpaceAccount::NeedFor(uint64_t incoming) const {
  if (!resolved_) return {};  // before recovery: nothing is counted yet
  // What jobs in flight may still write counts as incoming: it will land. What passed
  // descriptors hold is their holders' (NeedForHolder): as if it were not there.
  return BytesToFree(used_total_ - std::min(used_total_, held_listed_), incoming + reserved_, limits_.max_use,
                     free_bytes() + held_total_, limits_.keep_free);
}

ByteNeed SpaceAccount::NeedForHolder(uint64_t incoming, uint32_t uid) const {
  const auto u = held_by_uid_.find(uid);
  if (!resolved_ || u == held_by_uid_.end()) return {};
  const uint64_t others = held_total_ - u->second;
  return BytesToFree(used_total_ - std::min(used_total_, held_listed_) + u->second, incoming + reserved_,
                     limits_.max_use, free_bytes() + others, limits_.keep_free);
}

std::string SpaceAccount::UseLine() const {
  return "use " + std::to_string(used_total_) + " of budget " + std::to_string(limits_.max_use) + " bytes, " +
         std::to_string(free_bytes()) + " free (keep-free " + std::to_string(limits_.keep_free) + ")";
}

}  // namespace atraced
