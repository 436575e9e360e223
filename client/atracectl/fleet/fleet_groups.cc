#include "fleet/fleet_groups.h"

#include <algorithm>
#include <tuple>

namespace atracectl {

FleetGroups::FleetGroups(const std::vector<std::string>& paths) {
  for (size_t b = 0; b < paths.size(); ++b) {
    FleetBundle fb;
    fb.path = paths[b];
    BundleVisitor v;
    v.meta_only = true;
    v.dir = [&](const BundleDir& d) {
      const std::string proc = d.path.substr(0, d.path.find('/'));
      auto [it, added] = index_.try_emplace({b, proc}, groups_.size());
      if (added) groups_.push_back({b, proc, d.pid, d.comm, "", "", std::nullopt, std::nullopt, d.uid, 0});
      FleetGroup& g = groups_[it->second];
      // A process's directories made before its LABELS have none: the ones that have them say.
      if (g.job.empty() && !d.job.empty()) g.job = d.job;
      if (!g.rank && d.rank) g.rank = d.rank;
      if (!g.world_size && d.world_size) g.world_size = d.world_size;
      if (g.comm.empty()) g.comm = d.comm;
      if (!g.uid) g.uid = d.uid;
    };
    BundleRead r = ReadBundle(paths[b], v);
    fb.host = r.host;
    fb.has_host = r.has_host;
    if (!r.status.ok()) fb.error = r.status.message();
    bundles_.push_back(std::move(fb));
  }
  for (FleetGroup& g : groups_) g.host = HostOf(g.bundle);
  std::stable_sort(groups_.begin(), groups_.end(), [](const FleetGroup& a, const FleetGroup& b) {
    return std::make_tuple(!a.rank.has_value(), a.rank.value_or(0), a.host, a.pid) <
           std::make_tuple(!b.rank.has_value(), b.rank.value_or(0), b.host, b.pid);
  });
  for (size_t i = 0; i < groups_.size(); ++i) {
    groups_[i].id = static_cast<int64_t>(i + 1);
    index_[{groups_[i].bundle, groups_[i].process_dir}] = i;
  }
}

FleetGroup& FleetGroups::Of(size_t b, const BundleDir& dir) {
  const std::string proc = dir.path.substr(0, dir.path.find('/'));
  auto [it, added] = index_.try_emplace({b, proc}, groups_.size());
  if (added) {
    groups_.push_back({b, proc, dir.pid, dir.comm, HostOf(b), dir.job, dir.rank, dir.world_size, dir.uid,
                       static_cast<int64_t>(groups_.size() + 1)});
  }
  return groups_[it->second];
}

std::string FleetGroups::HostOf(size_t b) const {
  const FleetBundle& fb = bundles_[b];
  if (fb.has_host && !fb.host.host.empty()) return fb.host.host;
  const size_t slash = fb.path.rfind('/');
  return slash == std::string::npos ? fb.path : fb.path.substr(slash + 1);
}

std::string FleetGroups::Label(const FleetGroup& g) {
  return (g.rank ? "rank " + std::to_string(*g.rank) : std::string("no rank")) + " \u00b7 " + g.host +
         " \u00b7 pid " + std::to_string(g.pid) + " \u00b7 " + (g.comm.empty() ? std::string("?") : g.comm);
}

std::string RankRanges(const std::vector<int64_t>& ranks, size_t max_chars) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (out.size() > max_chars) {
      return out + ",... (" + std::to_string(ranks.size() - i) + " more ranks)";
    }
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string MissingRanges(const std::vector<int64_t>& seen, int64_t world, size_t max_chars, int64_t* count) {
  std::string out;
  *count = 0;
  int64_t next = 0;  // the first rank not yet accounted for
  auto gap = [&](int64_t from, int64_t to) {  // [from, to)
    if (from >= to) return;
    *count += to - from;
    if (out.size() > max_chars) return;
    out += (out.empty() ? "" : ",") + std::to_string(from) + (to - from > 1 ? "-" + std::to_string(to - 1) : "");
    if (out.size() > max_chars) out += ",...";
  };
  for (int64_t r : seen) {
    if (r >= world) break;
    gap(next, r);
    next = std::max(next, r + 1);
  }
  gap(next, world);
  return out;
}

}  // namespace atracectl
