// The stacks of a report's [stack] section (a crash, a stack dump, an `atracectl dump`: the
// lines daemon/crash/stack_format.h writes and asys reads)
//
//   Thread 1 (TID, NAME)
//   #0 0x<pc> 0x<base> <module>[ <symbol>+0x<off>][ at <source>]
//
// and their merge over many ranks into one call-path tree in the manner of LLNL's STAT:
// a node per frame path from the outermost frame in, carrying the set of ranks whose threads
// pass through it. A frame is named by its function (the symbol without its offset), else by
// its module's file name and the pc's offset in it, so that the same place in two processes
// of one program has one name. Text from a report is bounded here and escaped where printed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace atracectl {

struct ThreadStack {
  long tid = 0;
  std::string name;
  std::vector<std::string> frames;  // #0 (innermost) first
};

// The threads of the report's [stack] section; empty when it has none. At most 4096 threads
// of 256 frames of 256 bytes each are kept.
std::vector<ThreadStack> ParseStackSection(std::string_view report);

class StackTree {
 public:
  // Adds one thread's frames (innermost first) for `rank`.
  void Add(int64_t rank, const std::vector<std::string>& frames);
  // Indented lines: "[0-3,5] frame", children two spaces in, the larger rank set first.
  std::string Text() const;
  // {"frame":"...","ranks":"0-3,5","children":[...]} for each root, as a JSON array.
  std::string Json() const;

 private:
  struct Node {
    std::set<int64_t> ranks;
    std::map<std::string, std::unique_ptr<Node>> children;
  };
  Node root_;
  size_t nodes_ = 0;
};

}  // namespace atracectl
