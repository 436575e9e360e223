// What atracectl reads of a [stack] section (client/atracectl/files/stack_report.h, over
// proto's reader) and the call-path tree over many ranks (fleet/stack_tree.h), driven directly.
#include <catch2/catch.hpp>

#include <string>

#include "files/stack_report.h"
#include "fleet/stack_tree.h"

using namespace atracectl;

namespace proto = atraced::proto;

namespace {

proto::StackFrameText Frame(uint32_t n, uint64_t pc, uint64_t base, std::string module, std::string symbol = "",
                            std::string source = "") {
  return {n, pc, base, std::move(module), std::move(symbol), std::move(source)};
}

// A report as the daemon writes it: a header, [process], [stack] through proto's writer, [maps].
std::string Report(const std::vector<proto::ThreadStack>& threads) {
  std::string out = "atraced: process 42 (train) dumped from outside; it runs on\n\n[process]\npid:42\n\n[stack]\n";
  for (const auto& t : threads) out += proto::ThreadBlock(t);
  return out + "[maps]\n00400000-00402000 r-xp 00000000 08:01 12 /opt/train\n";
}

proto::ThreadStack Thread(uint32_t number, int64_t tid, std::string name, std::vector<proto::StackFrameText> frames) {
  proto::ThreadStack t;
  t.number = number;
  t.tid = tid;
  t.name = std::move(name);
  t.frames = std::move(frames);
  return t;
}

}  // namespace

TEST_CASE("stack report: frames named by function, else by module and offset, through proto's reader",
          "[atracectl][stack]") {
  proto::ThreadStack main = Thread(1, 42, "train",
                                   {Frame(0, 0x7f0000001010, 0x7f0000000000, "/lib/libc.so.6", "__futex_wait+0x12"),
                                    Frame(1, 0x401000, 0x400000, "/opt/train", "wait_allreduce_done+0x10", "train.c:10"),
                                    Frame(2, 0x401234, 0x400000, "/opt/train"), Frame(3, 0x10, 0, "")});
  main.held_us = 12;
  main.asked_us = 3;
  const std::string report = Report({main, Thread(2, 43, "hccl watchdog", {Frame(0, 0x7f0000002000, 0x7f0000000000, "/lib/libc.so.6", "poll+0x4")})});
  const std::vector<ThreadFrames> t = FrameNamesOf(report);
  REQUIRE(t.size() == 2);
  CHECK(t[0].tid == 42);
  CHECK(t[0].frames == std::vector<std::string>{"__futex_wait", "wait_allreduce_done", "train+0x1234", "??+0x10"});
  CHECK(t[1].tid == 43);
  CHECK(t[1].frames == std::vector<std::string>{"poll"});
  // info's view: each thread's lines as the writer writes them, the held note among its notes.
  const std::vector<ThreadLines> lines = ThreadLinesOf(report, 2);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].header == "Thread 1 (42, train)");
  REQUIRE(lines[0].frames.size() == 2);  // at most max_frames
  CHECK(lines[0].frames[1] == "#1 0x0000000000401000 0x0000000000400000 /opt/train wait_allreduce_done+0x10 at train.c:10");
  CHECK(lines[0].notes == std::vector<std::string>{"(held stopped 12 us; it stopped 3 us after it was asked to)"});
  CHECK(lines[1].header == "Thread 2 (43, hccl watchdog)");
}

TEST_CASE("stack report: no [stack] section is no threads, and the byte bound cuts and says so", "[atracectl][stack]") {
  CHECK(FrameNamesOf("atraced: a report\n[process]\npid:1\n").empty());
  CHECK(ThreadLinesOf("atraced: a report\n", 8).empty());
  std::vector<proto::ThreadStack> threads;
  for (uint32_t i = 1; i <= 50; ++i) {
    threads.push_back(Thread(i, 100 + i, "w", {Frame(0, 0x1010, 0x1000, "/m", "f" + std::to_string(i) + "+0x1")}));
  }
  const std::string report = Report(threads);
  bool cut = false;
  CHECK(FrameNamesOf(report, SIZE_MAX, &cut).size() == 50);
  CHECK_FALSE(cut);
  const std::vector<ThreadFrames> small = FrameNamesOf(report, 1000, &cut);
  CHECK(cut);
  CHECK(small.size() < 50);
  std::string wide = "f" + std::string(1000, 'x') + "+0x1";
  CHECK(FrameName(Frame(0, 1, 0, "/m", wide)).size() == 256);
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
