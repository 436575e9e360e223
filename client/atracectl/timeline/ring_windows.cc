#include "timeline/ring_windows.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <unordered_map>

namespace atracectl {
namespace {

uint64_t Hash(std::string_view s) {  // FNV-1a, 64 bits
  uint64_t h = 14695981039346656037ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

constexpr size_t kMaxCandidates = 256;  // offsets tried per save (a text repeated over and over)

}  // namespace

bool RingPositionsSeen::Add(const std::pair<int64_t, std::string>& track, uint64_t ring, uint64_t position) {
  std::map<uint64_t, uint64_t>& runs = seen_[{track.first, track.second, ring}];
  auto next = runs.upper_bound(position);  // the first run that starts after it
  if (next != runs.begin()) {
    auto prev = std::prev(next);
    if (prev->second >= position) return false;  // inside a run: seen
    if (prev->second + 1 == position) {          // extends it, and joins the next when adjacent
      prev->second = position;
      if (next != runs.end() && next->first == position + 1) {
        prev->second = next->second;
        runs.erase(next);
      }
      return true;
    }
  }
  if (next != runs.end() && next->first == position + 1) {  // the next run starts right after it
    const uint64_t last = next->second;
    runs.erase(next);
    runs.emplace(position, last);
    return true;
  }
  runs.emplace(position, position);
  return true;
}

std::vector<bool> RingWindows::Place(const std::pair<int64_t, std::string>& track, const std::vector<SavedRecord>& save) {
  std::vector<Seen> f;
  f.reserve(save.size());
  for (const SavedRecord& r : save) f.push_back({Hash(r.text), r.ts});
  std::vector<Seen>& w = windows_[track];
  const auto n = static_cast<int64_t>(f.size()), m = static_cast<int64_t>(w.size());
  // Offsets d with f[i] = w[i + d]: the save starts inside the window (f[0] in it), or the
  // window starts inside the save (w[0] in it).
  std::vector<int64_t> candidates;
  if (n > 0 && m > 0) {
    for (int64_t j = m - 1; j >= 0 && candidates.size() < kMaxCandidates; --j) {
      if (w[static_cast<size_t>(j)].hash == f[0].hash) candidates.push_back(j);
    }
    for (int64_t i = 1; i < n && candidates.size() < 2 * kMaxCandidates; ++i) {
      if (f[static_cast<size_t>(i)].hash == w[0].hash) candidates.push_back(-i);
    }
  }
  // Of the offsets where every overlapping record matches, the one whose times agree best (the
  // smallest mean difference: a text repeated over and over matches at several offsets, its
  // own copy only at one), then the one that overlaps most.
  int64_t best = 0, best_overlap = 0;
  long double best_skew = 0;
  for (const int64_t d : candidates) {
    const int64_t lo = std::max<int64_t>(0, -d), hi = std::min<int64_t>(n, m - d);
    if (hi <= lo) continue;
    bool same = true;
    long double skew = 0;
    for (int64_t i = lo; i < hi && same; ++i) {
      const Seen& a = f[static_cast<size_t>(i)];
      const Seen& b = w[static_cast<size_t>(i + d)];
      const int64_t apart = std::llabs(a.ts - b.ts);
      same = a.hash == b.hash && apart <= kSameRecordSkewUs;
      skew += static_cast<long double>(apart);
    }
    if (!same) continue;
    skew /= static_cast<long double>(hi - lo);
    if (best_overlap == 0 || skew < best_skew || (skew == best_skew && hi - lo > best_overlap)) {
      best = d, best_overlap = hi - lo, best_skew = skew;
    }
  }
  std::vector<bool> fresh(save.size(), true);
  if (best_overlap == 0) {
    // No overlap: a window of its own. Kept after the known one when later, else before.
    if (m == 0 || (n > 0 && f.front().ts >= w.back().ts)) {
      w.insert(w.end(), f.begin(), f.end());
    } else if (n > 0) {
      w.insert(w.begin(), f.begin(), f.end());
    }
  } else {
    const int64_t lo = std::max<int64_t>(0, -best), hi = std::min<int64_t>(n, m - best);
    for (int64_t i = lo; i < hi; ++i) fresh[static_cast<size_t>(i)] = false;
    if (hi < n) w.insert(w.end(), f.begin() + hi, f.end());         // newer than the window
    if (lo > 0) w.insert(w.begin(), f.begin(), f.begin() + lo);     // older than it
  }
  if (w.size() > kMaxWindow) w.erase(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(w.size() - kMaxWindow));
  return fresh;
}

}  // namespace atracectl
