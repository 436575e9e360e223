// The order log's records, parsed from strings: no disk.
#include <catch2/catch.hpp>

#include "atraced/store/order_log.h"

using namespace atraced;

namespace {

const std::string kProc = "trace_1_2_20260101000000000000";
const std::string kEvent = "schedule_event_2_20260101000000000001";

OrderEntry Entry(uint64_t seq, AgeClass cls = AgeClass::kHost, std::string event = kEvent) {
  return {seq, cls, cls == AgeClass::kDevice ? 3u : 0u, 1000, 1779460215000000, kProc, std::move(event), ""};
}

}  // namespace

TEST_CASE("created and removed records round-trip", "[order_log]") {
  std::string text(kOrderLogHeader);
  AppendCreated(Entry(1), text);
  AppendCreated(Entry(2, AgeClass::kDevice, "schedule_event_2_20260101000000000002"), text);
  AppendCreated(Entry(5, AgeClass::kExit, "exit_event_2_20260101000000000003"), text);
  AppendRemoved(2, text);
  CHECK(text.find("+ 1 h 0 1000 1779460215000000 " + kProc + "/" + kEvent + "\n") != std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  CHECK(r.records == 4);
  REQUIRE(r.live.size() == 2);
  CHECK(r.live[0] == Entry(1));
  CHECK(r.live[1] == Entry(5, AgeClass::kExit, "exit_event_2_20260101000000000003"));
  REQUIRE(r.removing.size() == 1);
  CHECK(r.removing[0].seq == 2);
  CHECK(r.removing[0].device_id == 3);
}

TEST_CASE("a torn last record is ignored, not reported", "[order_log]") {
  std::string text;
  AppendCreated(Entry(1), text);
  std::string second;
  AppendCreated(Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002"), second);
  text += second.substr(0, second.size() / 2);
  auto r = ReplayOrderLog(text);
  CHECK(r.live.size() == 1);
  CHECK(r.rejected == 0);
}

TEST_CASE("hostile or inconsistent lines are rejected with a reason", "[order_log][security]") {
  auto [line, reason] = GENERATE(table<std::string, std::string>({
      {"+ 1 h 0 0 0 ../../etc/schedule_event_2_20260101000000000001", "path"},
      {"+ 1 h 0 0 0 " + kProc + "/../x", "path"},
      {"+ 1 h 0 0 0 " + kProc, "path"},
      {"+ 1 x 0 0 0 " + kProc + "/" + kEvent, "bad class"},
      {"+ 1 e 0 0 0 " + kProc + "/" + kEvent, "class does not match"},
      {"+ 0 h 0 0 0 " + kProc + "/" + kEvent, "bad sequence"},
      {"+ 18446744073709551616 h 0 0 0 " + kProc + "/" + kEvent, "bad sequence"},
      {"+ -1 h 0 0 0 " + kProc + "/" + kEvent, "bad sequence"},
      {"+ 1 h 4294967296 0 0 " + kProc + "/" + kEvent, "bad number"},
      {"+ 1 h 0 0 0 " + kProc + "/" + kEvent + " extra", "expected 7 fields"},
      {"- 7", "removal of unknown sequence"},
      {"- x", "bad removal record"},
      {"? 1", "unknown record"},
  }));
  CAPTURE(line);
  auto r = ReplayOrderLog(line + "\n");
  CHECK(r.live.empty());
  CHECK(r.rejected == 1);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].find(reason) != std::string::npos);
}

TEST_CASE("sequences must increase and a live path appears once", "[order_log][security]") {
  std::string text;
  AppendCreated(Entry(5), text);
  AppendCreated(Entry(5, AgeClass::kHost, "schedule_event_2_20260101000000000002"), text);  // repeats 5
  AppendCreated(Entry(4, AgeClass::kHost, "schedule_event_2_20260101000000000003"), text);  // goes back
  AppendCreated(Entry(6), text);                                                            // same path, live
  auto r = ReplayOrderLog(text);
  CHECK(r.live.size() == 1);
  CHECK(r.rejected == 3);
  // After a removal the same path may be created again.
  AppendRemoved(5, text);
  AppendCreated(Entry(7), text);
  r = ReplayOrderLog(text);
  REQUIRE(r.live.size() == 1);
  CHECK(r.live[0].seq == 7);
  REQUIRE(r.removing.size() == 1);
  CHECK(r.removing[0].seq == 5);
}

TEST_CASE("a directory's program rides in a 'c' record after its '+'", "[order_log]") {
  OrderEntry e = Entry(1);
  e.comm = "python3.11";
  std::string text(kOrderLogHeader);
  AppendCreated(e, text);
  AppendCreated(Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002"), text);  // none known
  CHECK(text.find("\nc 1 python3.11\n+ 2 ") != std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  REQUIRE(r.live.size() == 2);
  CHECK(r.live[0].comm == "python3.11");
  CHECK(r.live[1].comm.empty());
  // A 'c' that is not a name, names no live directory, or comes twice is refused; the
  // directory stays either way.
  for (const std::string& bad : {std::string("c 1 ../x"), std::string("c 9 prog"), std::string("c 1 a b"),
                                 std::string("c 2 ") + std::string(64, 'p'), std::string("c 1 other")}) {
    INFO(bad);
    auto again = ReplayOrderLog(text + bad + "\n");
    CHECK(again.rejected == 1);
    CHECK(again.live.size() == 2);
    CHECK(again.live[0].comm == "python3.11");
  }
}

TEST_CASE("a save's 'p' without its 'd' leaves the directory incomplete, and the rewrite keeps it", "[order_log]") {
  std::string text(kOrderLogHeader);
  OrderEntry saving = Entry(1);
  saving.incomplete = true;  // written with its '+', as BeginEvent does for a save
  AppendCreated(saving, text);
  OrderEntry cut = Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002");
  cut.incomplete = true;
  AppendCreated(cut, text);
  AppendCreated(Entry(3, AgeClass::kHost, "schedule_event_2_20260101000000000003"), text);  // no save: complete
  AppendSaved(1, text);
  CHECK(text.find(kEvent + "\np 1\n+ 2 ") != std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  CHECK(r.records == 6);
  REQUIRE(r.live.size() == 3);
  CHECK_FALSE(r.live[0].incomplete);
  CHECK(r.live[1].incomplete);
  CHECK_FALSE(r.live[2].incomplete);
  // The start-up rewrite writes the live entries back: the cut-short save stays incomplete.
  std::string rewritten(kOrderLogHeader);
  for (const OrderEntry& e : r.live) AppendCreated(e, rewritten);
  auto again = ReplayOrderLog(rewritten);
  CHECK(again.rejected == 0);
  REQUIRE(again.live.size() == 3);
  CHECK(again.live == r.live);
  // A later save into the same directory, begun and completed: 'p' again, then 'd'.
  AppendSaving(3, text);
  CHECK(ReplayOrderLog(text).live[2].incomplete);
  AppendSaved(3, text);
  CHECK_FALSE(ReplayOrderLog(text).live[2].incomplete);
}

TEST_CASE("a log from before saves were logged loads with every directory complete", "[order_log]") {
  // Written by an older daemon: '+', 'c' and '-' only.
  const std::string text = std::string(kOrderLogHeader) + "+ 1 h 0 1000 5 " + kProc + "/" + kEvent + "\nc 1 prog\n" +
                           "+ 2 e 0 1000 6 " + kProc + "/exit_event_2_20260101000000000002\n- 1\n";
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  REQUIRE(r.live.size() == 1);
  CHECK_FALSE(r.live[0].incomplete);
  REQUIRE(r.removing.size() == 1);
  CHECK_FALSE(r.removing[0].incomplete);
}

TEST_CASE("save records that are torn, repeated or name no pending save are refused", "[order_log][security]") {
  std::string base(kOrderLogHeader);
  OrderEntry saving = Entry(1);
  saving.incomplete = true;
  AppendCreated(saving, base);
  AppendCreated(Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002"), base);
  AppendCreated(Entry(3, AgeClass::kHost, "schedule_event_2_20260101000000000003"), base);
  AppendRemoved(3, base);
  auto [line, reason] = GENERATE(table<std::string, std::string>({
      {"p 1", "already pending"},               // a duplicate 'p'
      {"d 2", "with no save pending"},          // 'd' without 'p'
      {"d 9", "unknown sequence"},              // 'd' for a sequence never created
      {"p 9", "unknown sequence"},
      {"d 3", "unknown sequence"},              // 'd' for a directory being removed
      {"d", "bad saved record"},
      {"p 1 2", "bad save record"},
      {"d -1", "bad saved record"},
      {"d 18446744073709551616", "bad saved record"},
  }));
  CAPTURE(line);
  auto r = ReplayOrderLog(base + line + "\n");
  CHECK(r.rejected == 1);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].find(reason) != std::string::npos);
  REQUIRE(r.live.size() == 2);
  CHECK(r.live[0].incomplete);  // the refused record changed nothing
  CHECK_FALSE(r.live[1].incomplete);
  // The same completion torn (no newline: the write never finished): ignored, the save stays incomplete.
  auto torn = ReplayOrderLog(base + "d 1");
  CHECK(torn.rejected == 0);
  CHECK(torn.live[0].incomplete);
  // A second 'd' after a good one is refused and changes nothing.
  auto twice = ReplayOrderLog(base + "d 1\nd 1\n");
  CHECK(twice.rejected == 1);
  CHECK_FALSE(twice.live[0].incomplete);
}

TEST_CASE("a directory's labels ride in an 'l' record and survive a replay", "[order_log]") {
  OrderEntry e = Entry(1);
  e.comm = "train";
  e.labels = {"J1", "3", "8"};
  OrderEntry rank_only = Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002");
  rank_only.labels.rank = "0";
  std::string text(kOrderLogHeader);
  AppendCreated(e, text);
  AppendCreated(rank_only, text);
  CHECK(text.find("\nl 1 job=J1 rank=3 world=8\n") != std::string::npos);
  CHECK(text.find("\nl 2 rank=0\n") != std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  REQUIRE(r.live.size() == 2);
  CHECK(r.live[0] == e);
  CHECK(r.live[1] == rank_only);
}

TEST_CASE("a labels record that is not one is rejected and the directory kept without labels", "[order_log][security]") {
  for (const std::string& bad : std::vector<std::string>{"l 1 job=J\x1b[31m", "l 1 rank=-1", "l 1 rank=01", "l 1 world=0", "l 1 job=a job=b",
                                "l 1 colour=red", "l 1", "l 1 job=", "l 9 job=J", "l 1 job=" + std::string(65, 'j')}) {
    std::string text(kOrderLogHeader);
    AppendCreated(Entry(1), text);
    text += bad + "\n";
    auto r = ReplayOrderLog(text);
    INFO(bad);
    CHECK(r.rejected == 1);
    REQUIRE(r.live.size() == 1);
    CHECK(r.live[0].labels.empty());
  }
}

TEST_CASE("a 'g' record vouches for the grants until a later 'g -' withdraws it", "[order_log]") {
  std::string text(kOrderLogHeader);
  AppendGrantStamp("v1,acl,r=4343,u=0", text);
  AppendCreated(Entry(1), text);
  CHECK(text.find("g v1,acl,r=4343,u=0\n") != std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  CHECK(r.grant_stamp == "v1,acl,r=4343,u=0");
  REQUIRE(r.live.size() == 1);

  AppendGrantStamp("", text);  // a grant failed on the event path
  CHECK(text.find("g -\n") != std::string::npos);
  r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  CHECK(r.grant_stamp.empty());
  CHECK(r.live.size() == 1);

  // A log written before the record vouches for nothing.
  std::string old(kOrderLogHeader);
  AppendCreated(Entry(1), old);
  CHECK(ReplayOrderLog(old).grant_stamp.empty());
}

TEST_CASE("a grant record that is not one is rejected and vouches for nothing", "[order_log][security]") {
  for (const std::string& line : std::vector<std::string>{"g", "g v1,acl v2", "g V1,ACL", "g v1/../x",
                                                          "g " + std::string(65, 'a'), "g  v1"}) {
    std::string text(kOrderLogHeader);
    text += line + "\n";
    AppendCreated(Entry(1), text);
    auto r = ReplayOrderLog(text);
    INFO(line);
    CHECK(r.rejected == 1);
    CHECK(r.grant_stamp.empty());
    CHECK(r.live.size() == 1);  // the directories are kept; only the grants are checked in full
  }
}

TEST_CASE("a dump's record says whose it is, survives a replay, and a bad one is rejected", "[order_log][dump_keep]") {
  std::string text(kOrderLogHeader);
  OrderEntry hang = Entry(1);
  hang.dump = DumpKind::kHang;
  OrderEntry dump = Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002");
  dump.dump = DumpKind::kOperator;
  AppendCreated(hang, text);
  AppendCreated(dump, text);
  AppendCreated(Entry(3, AgeClass::kHost, "schedule_event_2_20260101000000000003"), text);
  CHECK(text.find("o 1 hang\n") != std::string::npos);
  CHECK(text.find("o 2 dump\n") != std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  REQUIRE(r.live.size() == 3);
  CHECK(r.live[0] == hang);
  CHECK(r.live[1] == dump);
  CHECK(r.live[2].dump == DumpKind::kNone);
  // Planted: twice for one directory, for one that does not exist, an unknown kind, no number.
  for (const std::string bad : {"o 1 dump\n", "o 9 hang\n", "o 3 crash\n", "o x hang\n", "o 3\n", "o 3 hang extra\n"}) {
    CAPTURE(bad);
    auto planted = ReplayOrderLog(text + bad);
    CHECK(planted.rejected == 1);
    REQUIRE(planted.live.size() == 3);
    CHECK(planted.live[0].dump == DumpKind::kHang);
    CHECK(planted.live[2].dump == DumpKind::kNone);
  }
}

TEST_CASE("an export's record releases a dump from dump-keep, survives a replay and a rewrite, and a bad one is rejected",
          "[order_log][dump_keep]") {
  std::string text(kOrderLogHeader);
  OrderEntry hang = Entry(1);
  hang.dump = DumpKind::kHang;
  OrderEntry plain = Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002");
  AppendCreated(hang, text);
  AppendCreated(plain, text);
  AppendExported(1, text);
  CHECK(text.find("x 1\n") != std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  REQUIRE(r.live.size() == 2);
  CHECK(r.live[0].exported);
  CHECK_FALSE(r.live[1].exported);
  // The start-up rewrite writes it back after its 'o', so it is read the same again.
  std::string rewritten(kOrderLogHeader);
  for (const OrderEntry& e : r.live) AppendCreated(e, rewritten);
  CHECK(rewritten.find("o 1 hang\nx 1\n") != std::string::npos);
  auto again = ReplayOrderLog(rewritten);
  CHECK(again.rejected == 0);
  CHECK(again.live == r.live);
  // A log from before it: the dump is still kept (not exported).
  std::string older(kOrderLogHeader);
  AppendCreated(hang, older);
  REQUIRE(ReplayOrderLog(older).live.size() == 1);
  CHECK_FALSE(ReplayOrderLog(older).live[0].exported);
  // Planted: of a directory that is no dump, of none, twice, malformed.
  for (const std::string bad : {"x 2\n", "x 9\n", "x 1\n", "x\n", "x one\n", "x 1 2\n"}) {
    CAPTURE(bad);
    auto planted = ReplayOrderLog(text + bad);
    CHECK(planted.rejected == 1);
    REQUIRE(planted.live.size() == 2);
    CHECK(planted.live[0].exported);
    CHECK_FALSE(planted.live[1].exported);
  }
}

TEST_CASE("a directory made for a save is logged so, survives a replay, and a bad record is rejected", "[order_log][provenance]") {
  std::string text(kOrderLogHeader);
  OrderEntry saved = Entry(1);
  saved.saved = true;
  AppendCreated(saved, text);
  AppendCreated(Entry(2, AgeClass::kHost, "schedule_event_2_20260101000000000002"), text);
  CHECK(text.find("s 1\n") != std::string::npos);
  CHECK(text.find("s 2\n") == std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  REQUIRE(r.live.size() == 2);
  CHECK(r.live[0] == saved);
  CHECK_FALSE(r.live[1].saved);
  // Planted: twice for one directory, for one that does not exist, no number, extra fields.
  for (const std::string bad : {"s 1\n", "s 9\n", "s x\n", "s\n", "s 2 extra\n"}) {
    CAPTURE(bad);
    auto planted = ReplayOrderLog(text + bad);
    CHECK(planted.rejected == 1);
    REQUIRE(planted.live.size() == 2);
    CHECK(planted.live[0].saved);
    CHECK_FALSE(planted.live[1].saved);
  }
}

TEST_CASE("an aged dump's record keeps its labels and reason, survives a replay, and a bad one is rejected",
          "[order_log][aged]") {
  std::string text(kOrderLogHeader);
  AgedDump bytes{.aged_us = 1779460215000000, .reason = AgingReason::kMaxUse, .uid = 1000, .dump = DumpKind::kHang,
                 .exported = false, .process_dir = kProc, .event_dir = kEvent,
                 .labels = {.job = "job-7", .rank = "3", .world_size = "8"}};
  AgedDump count = bytes;
  count.reason = AgingReason::kCount;
  count.dump = DumpKind::kOperator;
  count.exported = true;
  count.labels = {};
  AppendAged(bytes, text);
  AppendAged(count, text);
  CHECK(text.find("a 1779460215000000 bytes 1000 hang 0 " + kProc + "/" + kEvent + " job=job-7 rank=3 world=8\n") !=
        std::string::npos);
  auto r = ReplayOrderLog(text);
  CHECK(r.rejected == 0);
  CHECK(r.live.empty());  // evidence only: no directory of the tree
  REQUIRE(r.aged.size() == 2);
  CHECK(r.aged[0] == bytes);
  CHECK(r.aged[1] == count);
  // Planted: an unknown reason or kind, a path that is no event directory, a label with a
  // space's worth of fields or an unknown key, a negative time, a name outside the tree.
  for (const std::string& bad :
       {"a 1 disk 0 hang 0 " + kProc + "/" + kEvent + "\n", "a 1 bytes 0 crash 0 " + kProc + "/" + kEvent + "\n",
        "a 1 bytes 0 hang 2 " + kProc + "/" + kEvent + "\n", std::string("a 1 bytes 0 hang 0 ../etc/passwd\n"),
        "a 1 bytes 0 hang 0 " + kProc + "/" + kEvent + " user=root\n",
        "a 1 bytes 0 hang 0 " + kProc + "/" + kEvent + " rank=3 rank=4\n",
        "a -1 bytes 0 hang 0 " + kProc + "/" + kEvent + "\n", std::string("a 1 bytes 0 hang 0\n"),
        "a 1 bytes 0 hang 0 " + kProc + "/" + kEvent + " job=a job=b rank=1 world=2\n",
        std::string("a 1 bytes 0 hang 0 trace_1_2_x/none\n")}) {
    CAPTURE(bad);
    auto planted = ReplayOrderLog(text + bad);
    CHECK(planted.rejected == 1);
    CHECK(planted.aged.size() == 2);
  }
  // Bounded: the newest kMaxAgedDumps are kept, oldest first.
  std::string many(kOrderLogHeader);
  for (size_t i = 0; i < kMaxAgedDumps + 5; ++i) {
    AgedDump a = bytes;
    a.aged_us = static_cast<int64_t>(i);
    AppendAged(a, many);
  }
  auto bounded = ReplayOrderLog(many);
  REQUIRE(bounded.aged.size() == kMaxAgedDumps);
  CHECK(bounded.aged.front().aged_us == 5);
  CHECK(bounded.aged.back().aged_us == static_cast<int64_t>(kMaxAgedDumps + 4));
}
