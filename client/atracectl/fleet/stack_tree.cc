#include "fleet/stack_tree.h"

#include <algorithm>

#include "common/escape.h"

namespace atracectl {

void RankSet::Insert(int64_t rank) {
  if (ranges_.empty() || rank > ranges_.back().second + 1) {
    ranges_.push_back({rank, rank});
  } else if (rank == ranges_.back().second + 1) {
    ranges_.back().second = rank;
  } else {
    // Out of order: the range at or after it, merged with its neighbours.
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), rank,
                               [](const std::pair<int64_t, int64_t>& r, int64_t v) { return r.second + 1 < v; });
    if (it != ranges_.end() && it->first <= rank && rank <= it->second) return;
    if (it != ranges_.end() && it->first == rank + 1) {
      it->first = rank;
    } else if (it != ranges_.end() && it->second + 1 == rank) {
      it->second = rank;
    } else {
      it = ranges_.insert(it, {rank, rank});
    }
    if (it + 1 != ranges_.end() && it->second + 1 >= (it + 1)->first) {
      it->second = (it + 1)->second;
      ranges_.erase(it + 1);
    }
    if (it != ranges_.begin() && (it - 1)->second + 1 >= it->first) {
      (it - 1)->second = it->second;
      ranges_.erase(it);
    }
  }
  ++count_;
}

std::string RankSet::Ranges(size_t max_chars) const {
  std::string out;
  size_t shown = 0;
  for (const auto& [first, last] : ranges_) {
    if (out.size() > max_chars) return out + ",... (" + std::to_string(count_ - shown) + " more ranks)";
    out += (out.empty() ? "" : ",") + std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
    shown += static_cast<size_t>(last - first + 1);
  }
  return out;
}

std::vector<int64_t> RankSet::Ranks() const {
  std::vector<int64_t> out;
  for (const auto& [first, last] : ranges_) {
    for (int64_t r = first; r <= last; ++r) out.push_back(r);
  }
  return out;
}

void StackTree::Add(int64_t rank, const std::vector<std::string>& frames) {
  Node* node = &root_;
  node->ranks.Insert(rank);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    auto found = node->children.find(*it);
    if (found == node->children.end()) {
      if (nodes_ >= max_nodes_) {
        if (node->cut++ == 0) node->cut_example = *it;
        node->cut_ranks.Insert(rank);
        ++cut_paths_;
        return;
      }
      ++nodes_;
      found = node->children.emplace(*it, std::make_unique<Node>()).first;
    }
    node = found->second.get();
    node->ranks.Insert(rank);
  }
}

namespace {

template <class Node>
std::vector<std::pair<const std::string*, const Node*>> Ordered(const Node& n) {
  std::vector<std::pair<const std::string*, const Node*>> kids;
  for (const auto& [name, child] : n.children) kids.push_back({&name, child.get()});
  std::stable_sort(kids.begin(), kids.end(), [](const auto& a, const auto& b) {
    return a.second->ranks.size() > b.second->ranks.size();
  });
  return kids;
}

}  // namespace

void StackTree::TextOf(const Node& n, int depth, std::string* out) {
  for (const auto& [name, child] : Ordered(n)) {
    out->append(static_cast<size_t>(depth) * 2, ' ');
    *out += "[" + child->ranks.Ranges(kTreeRanksShown) + "] " + TerminalLine(*name) + "\n";
    TextOf(*child, depth + 1, out);
  }
  if (n.cut) {
    out->append(static_cast<size_t>(depth) * 2, ' ');
    *out += "[" + n.cut_ranks.Ranges(kTreeRanksShown) + "] +" + std::to_string(n.cut) +
            " call path(s) past the tree's bound (--max-tree-nodes), e.g. " + TerminalLine(n.cut_example) + "\n";
  }
}

void StackTree::JsonOf(const Node& n, std::string* out) {
  *out += "[";
  bool first = true;
  for (const auto& [name, child] : Ordered(n)) {
    *out += std::string(first ? "" : ",") + "{\"frame\":" + JsonString(*name) +
            ",\"ranks\":" + JsonString(child->ranks.Ranges(kTreeRanksShown)) + ",\"children\":";
    JsonOf(*child, out);
    if (child->cut) {
      *out += ",\"cut\":{\"paths\":" + std::to_string(child->cut) + ",\"ranks\":" +
              JsonString(child->cut_ranks.Ranges(kTreeRanksShown)) + ",\"example\":" + JsonString(child->cut_example) + "}";
    }
    *out += "}";
    first = false;
  }
  *out += "]";
}

std::string StackTree::Text() const {
  std::string out;
  TextOf(root_, 0, &out);
  return out;
}

std::string StackTree::Json() const {
  std::string out;
  JsonOf(root_, &out);
  return out;
}

}  // namespace atracectl
