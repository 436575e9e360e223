// The [stack] section's writer and reader (atraced/proto/stack_report.h): what the daemon's
// unwind helper writes is what the report readers get back, field by field; every thread
// of a large process fits, each within its bound; hostile text cannot open a thread or a
// section; a reader given anything stays within its bounds.
#include <catch2/catch.hpp>

#include <string>

#include "atraced/proto/stack_report.h"

using namespace atraced::proto;

namespace {

ThreadStack Thread(uint32_t number, int64_t tid, std::string name, size_t frames) {
  ThreadStack t;
  t.number = number;
  t.tid = tid;
  t.name = std::move(name);
  for (size_t i = 0; i < frames; ++i) {
    t.frames.push_back({static_cast<uint32_t>(i), 0x7f0000001000 + i, 0x7f0000000000, "/usr/lib/x86_64-linux-gnu/libc.so.6",
                        "pthread_mutex_lock+0x" + std::to_string(i), "pthread_mutex_lock.c:" + std::to_string(i)});
  }
  return t;
}

}  // namespace

TEST_CASE("stack report: a thread's block reads back field by field", "[stack_report]") {
  ThreadStack t = Thread(3, 4242, "locker ab", 2);
  t.frames.push_back({2, 0x401000, 0, "", "", ""});  // no module, symbol or source
  t.frames.push_back({3, 0x402000, 0x400000, "/opt/my app/bin", "", "main.c:7"});  // a space in the path, no symbol
  t.notes = {"the walk stopped: no pc"};
  t.held_us = 17;
  t.asked_us = 230;
  const std::string block = ThreadBlock(t);
  INFO(block);
  CHECK(block.rfind("Thread 3 (4242, locker ab)\n#0 0x00007f0000001000 0x00007f0000000000 "
                    "/usr/lib/x86_64-linux-gnu/libc.so.6 pthread_mutex_lock+0x0 at pthread_mutex_lock.c:0\n",
                    0) == 0);
  CHECK(block.find("\n#2 0x0000000000401000 0x0000000000000000 ??\n") != std::string::npos);
  // asys's four tokens stay four: the module's space is escaped.
  CHECK(block.find("\n#3 0x0000000000402000 0x0000000000400000 /opt/my\\x20app/bin at main.c:7\n") != std::string::npos);
  CHECK(block.find("(held stopped 17 us; it stopped 230 us after it was asked to)\n\n") != std::string::npos);

  const StackSection read = ReadStackSection(block);
  REQUIRE(read.threads.size() == 1);
  const ThreadStack& r = read.threads[0];
  CHECK(r.number == 3);
  CHECK(r.tid == 4242);
  CHECK(r.name == "locker ab");
  REQUIRE(r.frames.size() == 4);
  CHECK(r.frames[1].pc == 0x7f0000001001);
  CHECK(r.frames[1].base == 0x7f0000000000);
  CHECK(r.frames[1].symbol == "pthread_mutex_lock+0x1");
  CHECK(r.frames[1].source == "pthread_mutex_lock.c:1");
  CHECK(r.frames[2].module.empty());
  CHECK(r.frames[2].symbol.empty());
  CHECK(r.frames[3].module == "/opt/my app/bin");
  CHECK(r.frames[3].symbol.empty());
  CHECK(r.frames[3].source == "main.c:7");
  CHECK(r.notes == std::vector<std::string>{"the walk stopped: no pc"});
  REQUIRE(r.held_us);
  CHECK(*r.held_us == 17);
  CHECK(r.asked_us == 230);
}

TEST_CASE("stack report: the section of a report, its notes apart from the threads'", "[stack_report]") {
  const std::string report = "atraced: process 7 (p) dumped\nstacks: 2 of 2\n\n[stack]\n" + NoteLine("3 frames of the handler") +
                             ThreadBlock(Thread(1, 7, "p", 1)) + ThreadBlock(Thread(2, 8, "q", 0)) +
                             NoteLine("inspected as uid 5") + "\n[maps]\n00400000-00401000 r-xp 0 0:0 0 /bin/p\n#0 0x1 0x1 x\n";
  const std::string_view section = StackSectionOf(report);
  CHECK(section.find("[maps]") == std::string_view::npos);
  const StackSection s = ReadStackSection(section);
  REQUIRE(s.threads.size() == 2);
  CHECK(s.threads[0].frames.size() == 1);
  CHECK(s.threads[1].frames.empty());
  CHECK(s.threads[1].notes.empty());  // the section's last note is not thread 2's
  CHECK(s.notes == std::vector<std::string>{"3 frames of the handler", "inspected as uid 5"});
  CHECK(StackSectionOf("no stack here\n[maps]\n").empty());
  CHECK(StackSectionOf("[stack]\n[maps]\n").empty());
}

TEST_CASE("stack report: hostile names cannot open a thread, a frame or a section", "[stack_report]") {
  ThreadStack t = Thread(1, 9, "x)\nThread 2 (1, y)\n[maps]", 0);
  t.frames.push_back({0, 1, 0, "/lib\n#1 0x0 0x0 evil", "f\n[maps]+0x1", "a\\x0ab.c:1"});
  t.notes = {"note)\n(forged"};
  const std::string block = ThreadBlock(t);
  INFO(block);
  CHECK(block.find("\n[") == std::string::npos);
  CHECK(block.find("\nThread 2") == std::string::npos);
  CHECK(block.find("\n#1") == std::string::npos);
  const StackSection s = ReadStackSection(block);
  REQUIRE(s.threads.size() == 1);
  CHECK(s.threads[0].name == t.name);
  REQUIRE(s.threads[0].frames.size() == 1);
  CHECK(s.threads[0].frames[0].module == t.frames[0].module);
  CHECK(s.threads[0].frames[0].symbol == t.frames[0].symbol);
  CHECK(s.threads[0].frames[0].source == t.frames[0].source);  // its backslash is its own, not an escape
  CHECK(s.threads[0].notes == t.notes);
}

TEST_CASE("stack report: a thread is bounded per frame and per block, and says what it left out", "[stack_report]") {
  StackFrameText huge{0, 0x10, 0x0, "/" + std::string(5000, 'm'), std::string(5000, 's') + "+0x1f", std::string(5000, 'c')};
  const std::string line = FrameLine(huge);
  CHECK(line.size() <= kMaxFrameLine);
  CHECK(line.find("...+0x1f at ") != std::string::npos);  // the symbol keeps its offset
  const StackSection one = ReadStackSection("Thread 1 (1, a)\n" + line);
  REQUIRE(one.threads.size() == 1);
  REQUIRE(one.threads[0].frames.size() == 1);
  CHECK(one.threads[0].frames[0].symbol.size() < 300);

  ThreadStack deep = Thread(1, 5, "deep", 400);  // a runaway recursion
  deep.held_us = 1;
  const std::string block = ThreadBlock(deep);
  CHECK(block.size() <= kMaxThreadBlock);
  const StackSection s = ReadStackSection(block);
  REQUIRE(s.threads.size() == 1);
  CHECK(s.threads[0].frames.size() <= kMaxStackFrames);
  CHECK(s.threads[0].frames.size() + s.threads[0].frames_left_out == 400);  // every frame listed or counted
  CHECK(s.threads[0].held_us == std::optional<uint64_t>(1));  // the notes are never crowded out
  CHECK(block.find(" more frames not listed: a thread's part of the report is at most 128 frames") != std::string::npos);
}

TEST_CASE("stack report: every thread of a 1024-thread process fits the section's bound", "[stack_report]") {
  std::string section;
  for (uint32_t i = 0; i < kMaxStackThreads; ++i) {
    ThreadStack t = Thread(i + 1, 1000 + i, std::string(15, 'n'), 200);
    t.held_us = i;
    section += ThreadBlock(t);
  }
  CHECK(section.size() <= kMaxStackSection);
  section += "Thread 1025 (5000, past)\n#0 0x1 0x1 m\n";
  const StackSection s = ReadStackSection(section);
  CHECK(s.threads.size() == kMaxStackThreads);
  CHECK(s.threads_left_out == 1);
  CHECK(s.threads.back().held_us == std::optional<uint64_t>(kMaxStackThreads - 1));
}

TEST_CASE("stack report: the helper's counts", "[stack_report]") {
  const StackCounts c{201, 199, 4800};
  const std::string text = FormatStackCounts(c);
  CHECK(text == "threads 201\nread 199\nmax-stop-us 4800\n");
  const auto back = ParseStackCounts(text);
  REQUIRE(back);
  CHECK(back->threads == 201);
  CHECK(back->read == 199);
  CHECK(back->max_stop_us == 4800);
  CHECK_FALSE(ParseStackCounts("threads 1\nread 1\n"));
  CHECK_FALSE(ParseStackCounts("threads 1\nread x\nmax-stop-us 1\n"));
  CHECK_FALSE(ParseStackCounts(text + "more\n"));
  CHECK_FALSE(ParseStackCounts("threads 99999999999\nread 1\nmax-stop-us 1\n"));
}
