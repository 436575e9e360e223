// The [stack] reader (client/atracectl/files/stack_report.h) and the call-path tree over many
// ranks (fleet/stack_tree.h), driven directly.
#include <catch2/catch.hpp>

#include <string>

#include "files/stack_report.h"
#include "fleet/stack_tree.h"

using namespace atracectl;

namespace {

const char* const kReport =
    "atraced: process 42 (train) dumped from outside; it runs on\n\n[process]\npid:42\n\n[stack]\n"
    "Thread 1 (42, train)\n"
    "#0 0x00007f0000001010 0x00007f0000000000 /lib/libc.so.6 __futex_wait+0x12\n"
    "#1 0x0000000000401000 0x0000000000400000 /opt/train wait_allreduce_done+0x10 at train.c:10\n"
    "#2 0x0000000000401234 0x0000000000400000 /opt/train\n"
    "(held stopped 12 us)\n"
    "Thread 2 (43, hccl_watchdog)\n"
    "#0 0x00007f0000002000 0x00007f0000000000 /lib/libc.so.6 poll+0x4\n"
    "not a frame line\n"
    "\n[maps]\n#0 0x1 0x0 /not/a/frame of the stack\n";

}  // namespace

TEST_CASE("stack report: threads with their tid and name, frames named by function or module and offset",
          "[atracectl][stack]") {
  const std::vector<ThreadStack> t = ParseStackSection(kReport);
  REQUIRE(t.size() == 2);
  CHECK(t[0].tid == 42);
  CHECK(t[0].name == "train");
  CHECK(t[0].frames == std::vector<std::string>{"__futex_wait", "wait_allreduce_done", "train+0x1234"});
  CHECK(t[1].tid == 43);
  CHECK(t[1].name == "hccl_watchdog");
  CHECK(t[1].frames == std::vector<std::string>{"poll"});  // the [maps] section is not read as frames
}

TEST_CASE("stack report: no [stack] section is no threads, and the bounds cut and say so", "[atracectl][stack]") {
  CHECK(ParseStackSection("atraced: a report\n[process]\npid:1\n").empty());
  bool cut = false;
  const std::vector<ThreadStack> small = ParseStackSection(kReport, 20, &cut);
  CHECK(cut);
  REQUIRE_FALSE(small.empty());
  size_t frames = 0;
  for (const auto& t : small) frames += t.frames.size();
  CHECK(frames < 4);
  std::string many = "[stack]\n";
  many.insert(0, "x\n");
  for (int i = 0; i < 5000; ++i) many += "Thread " + std::to_string(i) + " (" + std::to_string(i) + ", t)\n";
  cut = false;
  CHECK(ParseStackSection(many, SIZE_MAX, &cut).size() == 4096);
  CHECK(cut);
  std::string deep = "x\n[stack]\nThread 1 (1, t)\n";
  for (int i = 0; i < 300; ++i) deep += "#" + std::to_string(i) + " 0x1 0x0 /m f" + std::to_string(i) + "+0x1\n";
  const auto d = ParseStackSection(deep);
  REQUIRE(d.size() == 1);
  CHECK(d[0].frames.size() == 256);
  std::string wide = "x\n[stack]\nThread 1 (1, t)\n#0 0x1 0x0 /m " + std::string(1000, 'f') + "+0x1\n";
  CHECK(ParseStackSection(wide)[0].frames[0].size() == 256);
}

TEST_CASE("rank set: ranks in any order are held as merged ranges", "[atracectl][stack]") {
  RankSet s;
  for (int64_t r : {5, 1, 3, 2, 9, 4, 4, 0, 7}) s.Insert(r);
  CHECK(s.size() == 8);
  CHECK(s.Ranges(SIZE_MAX) == "0-5,7,9");
  CHECK(s.Ranks() == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 7, 9});
  RankSet sparse;
  for (int64_t r = 0; r < 1000; r += 2) sparse.Insert(r);
  const std::string shown = sparse.Ranges(20);
  CHECK(shown.size() < 60);
  CHECK(shown.find("more ranks)") != std::string::npos);
}

TEST_CASE("stack tree: merged by frame path with ranks as ranges, and past its bound paths are counted with an example",
          "[atracectl][stack]") {
  StackTree tree;
  for (int64_t r = 0; r < 4; ++r) tree.Add(r, {"wait", r == 3 ? "load" : "allreduce", "main"});
  CHECK(tree.Text() == "[0-3] main\n  [0-2] allreduce\n    [0-2] wait\n  [3] load\n    [3] wait\n");
  CHECK(tree.nodes() == 5);
  CHECK(tree.Json() ==
        "[{\"frame\":\"main\",\"ranks\":\"0-3\",\"children\":[{\"frame\":\"allreduce\",\"ranks\":\"0-2\",\"children\":"
        "[{\"frame\":\"wait\",\"ranks\":\"0-2\",\"children\":[]}]},{\"frame\":\"load\",\"ranks\":\"3\",\"children\":"
        "[{\"frame\":\"wait\",\"ranks\":\"3\",\"children\":[]}]}]}]");
  StackTree bounded(2);
  bounded.Add(0, {"a", "main"});
  bounded.Add(1, {"b", "main"});
  bounded.Add(2, {"c", "main"});
  CHECK(bounded.nodes() == 2);
  CHECK(bounded.cut_paths() == 2);
  CHECK(bounded.Text() == "[0-2] main\n  [0] a\n  [1-2] +2 call path(s) past the tree's bound (--max-tree-nodes), e.g. b\n");
  CHECK(bounded.Json().find("\"cut\":{\"paths\":2,\"ranks\":\"1-2\",\"example\":\"b\"}") != std::string::npos);
}
