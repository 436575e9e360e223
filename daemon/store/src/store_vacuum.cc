// TraceStore, VACUUM_BY: journalctl's vacuum verbs (--older-than, --max-use, --keep), applied
// once through the same lists, order log and remover as the limits they mirror (trace_store.h,
// VacuumSpec), so the counts, the byte budget and a restart see exactly what was removed.
#include <errno.h>

#include <algorithm>
#include <unordered_set>

#include "atraced/store/trace_store.h"

namespace atraced {

Result<AgingReport> TraceStore::VacuumBy(const VacuumSpec& spec) {
  if (!spec.dry_run) {
    CollectRemovals();
    RetryFailed();
  }
  std::vector<Victim> victims;
  std::unordered_set<uint64_t> chosen;
  AgingReport report;
  auto take = [&](AgeClass c, ClassMap::iterator it) {
    if (it->second.pins != 0 || !chosen.insert(it->first).second) return;
    EnsureSized(it->second);
    report.bytes += it->second.bytes.allocated;
    victims.push_back({c, it});
  };
  if (spec.older_than) {  // as max-age: every class
    const int64_t now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now().time_since_epoch()).count();
    const int64_t cutoff = now_us - spec.older_than->count();
    for (AgeClass c : kAllAgeClasses) {
      ClassMap& map = classes_[static_cast<size_t>(c)];
      for (auto it = map.begin(); it != map.end(); ++it) {
        if (it->second.meta.created_us < cutoff) take(c, it);
      }
    }
  }
  if (spec.max_use) {  // as the byte budget: host and device merged first, exit last
    for (ClassMap& map : classes_) {
      for (auto& [seq, e] : map) EnsureSized(e);  // the root's use exact, not a recovery's 0
    }
    const uint64_t left = space_.used() - std::min(space_.used(), report.bytes);
    if (left > *spec.max_use) {
      const uint64_t need = left - *spec.max_use;
      static constexpr AgeClass kEvents[] = {AgeClass::kHost, AgeClass::kDevice};
      static constexpr AgeClass kExits[] = {AgeClass::kExit};
      uint64_t freed = 0;
      auto planned = PlanBytes(kEvents, need, 0, &freed, &chosen);
      if (freed < need) {
        uint64_t more = 0;
        auto exits = PlanBytes(kExits, need - freed, 0, &more, &chosen);
        planned.insert(planned.end(), exits.begin(), exits.end());
      }
      for (const Victim& v : planned) take(v.cls, v.it);
    }
  }
  if (spec.keep) {  // as record-num: host and device each; exit is not in the count
    for (AgeClass c : {AgeClass::kHost, AgeClass::kDevice}) {
      ClassMap& map = classes_[static_cast<size_t>(c)];
      std::vector<ClassMap::iterator> refs;
      std::vector<AgingCandidate> pool;
      for (auto it = map.begin(); it != map.end(); ++it) {
        if (chosen.count(it->first)) continue;  // already going
        refs.push_back(it);
        pool.push_back({it->second.bytes.allocated, it->second.meta.uid, it->second.pins == 0});
      }
      if (refs.size() <= *spec.keep) continue;
      const size_t excess = refs.size() - *spec.keep;
      for (size_t i : PlanByPolicy(retention_.policy, pool, [excess](size_t n, uint64_t) { return n >= excess; })) {
        take(c, refs[i]);
      }
    }
  }
  std::sort(victims.begin(), victims.end(), [](const Victim& a, const Victim& b) { return a.it->first < b.it->first; });
  if (spec.dry_run || victims.empty()) {
    for (const Victim& v : victims) {
      report.removed.push_back(v.it->second.rel_path);
      report.removed_uids.push_back(v.it->second.meta.uid);
    }
    return report;
  }
  if (!LogRemovals(victims, "dirs for vacuum")) {
    return Status::Error(EIO, "the order log cannot be written: nothing was removed");
  }
  Retire(victims, AgingReason::kVacuum, &report);  // the service logs who asked
  return report;
}

}  // namespace atraced
