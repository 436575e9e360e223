#include "atraced/common/refusal_log.h"

namespace atraced {

bool RefusalLog::ShouldLog(uint32_t uid, TimePoint now, uint64_t* suppressed) {
  Entry& e = by_uid_[uid];
  if (e.logged && now - e.last < kInterval) {
    ++e.suppressed;
    return false;
  }
  *suppressed = e.suppressed;
  e = Entry{now, 0, true};
  if (by_uid_.size() > kMaxUids) {  // never grows without bound
    std::erase_if(by_uid_, [&](const auto& kv) { return now - kv.second.last >= kInterval; });
  }
  return true;
}

bool RefusalLog::Due(uint32_t uid, TimePoint now) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() || !it->second.logged || now - it->second.last >= kInterval;
}

}  // namespace atraced
