// The stacks of many ranks (files/stack_report.h) merged into one call-path tree in the manner
// of LLNL's STAT: a node per frame path from the outermost frame in, carrying the set of ranks
// whose threads pass through it.
//
// The tree is bounded by a total number of nodes (hang's --max-tree-nodes): a call path that
// would pass it is not added below the node where it leaves the tree; that node counts such
// paths and keeps the first one's frame and the ranks they came from, as STAT degrades:
// counts and a representative, not every branch. A node's ranks are held as ranges.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "files/stack_report.h"

namespace atracectl {

// A set of ranks as sorted, disjoint ranges: ranks added in order cost one range.
class RankSet {
 public:
  void Insert(int64_t rank);
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::string Ranges(size_t max_chars) const;
  std::vector<int64_t> Ranks() const;

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // [first, last]
  size_t count_ = 0;
};

inline constexpr size_t kDefaultMaxTreeNodes = 20000;
inline constexpr size_t kTreeRanksShown = 160;  // characters of a node's ranks before a count

class StackTree {
 public:
  explicit StackTree(size_t max_nodes = kDefaultMaxTreeNodes) : max_nodes_(max_nodes) {}
  // Adds one thread's frames (innermost first) for `rank`.
  void Add(int64_t rank, const std::vector<std::string>& frames);
  // Indented lines: "[0-3,5] frame", children two spaces in, the larger rank set first; a
  // node with paths past the bound: "[ranks] +N call paths past the tree's bound, e.g. FRAME".
  std::string Text() const;
  // {"frame":"...","ranks":"0-3,5","children":[...]} for each root, as a JSON array; a node
  // with paths past the bound has "cut":{"paths":N,"ranks":"...","example":"FRAME"}.
  std::string Json() const;
  size_t nodes() const { return nodes_; }
  size_t cut_paths() const { return cut_paths_; }  // call paths left out past the bound

 private:
  struct Node {
    RankSet ranks;
    std::map<std::string, std::unique_ptr<Node>> children;
    size_t cut = 0;  // paths that would have made a child past the bound
    RankSet cut_ranks;
    std::string cut_example;
  };
  Node root_;
  size_t max_nodes_;
  size_t nodes_ = 0, cut_paths_ = 0;

  static void TextOf(const Node& n, int depth, std::string* out);
  static void JsonOf(const Node& n, std::string* out);
};

}  // namespace atracectl
