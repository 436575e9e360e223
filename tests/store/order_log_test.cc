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
