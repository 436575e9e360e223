#include "atraced/base/nearest_name.h"

#include <algorithm>

namespace atraced {

namespace {

// Levenshtein distance; names are short (the caller bounds `typed`).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string NearestName(std::string_view typed, const std::vector<std::string>& known) {
  if (typed.empty() || typed.size() > 64) return "";
  const size_t allowed = typed.size() <= 4 ? 1 : 2;
  std::string best;
  size_t best_distance = allowed + 1;
  bool tie = false;
  for (const auto& name : known) {
    // A prefix ("stat" for "status") is as close as one edit.
    const bool prefix = name.size() > typed.size() && name.compare(0, typed.size(), typed) == 0;
    const size_t d = prefix ? 1 : EditDistance(typed, name);
    if (d == 0 || d > allowed) continue;
    if (d < best_distance) {
      best = name;
      best_distance = d;
      tie = false;
    } else if (d == best_distance && name != best) {
      tie = true;
    }
  }
  return tie ? std::string() : best;
}

std::string DidYouMean(std::string_view typed, const std::vector<std::string>& known) {
  const std::string near = NearestName(typed, known);
  return near.empty() ? std::string() : "; did you mean '" + near + "'?";
}

}  // namespace atraced
