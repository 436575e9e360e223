// Issue 37, defect 8, against the real binaries: a save cut short by kill -9 (its worker held
// inside the write of its ring file with ptrace, so the kill comes mid-save whatever the
// machine's speed) is listed as incomplete after the restart, by `atracectl list` and in
// `atracectl status`, and a completed save is not; an order log from before saves were
// logged loads with every directory complete.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/held_worker.h"
#include "support/raw_client.h"
#include "support/ring_client.h"
#include "ctl_output.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

// The line of `text` that contains `needle` ("" if none): a row of `list`'s text output.
std::string LineWith(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) - start);
}

std::vector<std::string> ListedPaths(RawClient& c) {
  auto r = c.Call(ATR_OP_LIST, Payload(proto::ListRequest{0, 100}));
  REQUIRE(r);
  REQUIRE(r->status == 0);
  proto::ListReply list;
  REQUIRE(proto::Decode(r->body, &list).ok());
  std::vector<std::string> paths;
  for (const auto& e : list.entries) paths.push_back(e.path);
  return paths;
}

}  // namespace

TEST_CASE("kill -9 mid-save: after the restart the save's directory is listed incomplete, a completed one is not",
          "[hardening][shutdown]") {
  DaemonProcess d({{"--io-workers", "1"}});
  REQUIRE(d.Start());
  RawClient done = ConnectedWithRing(d, "the completed save");
  auto saved = done.Call(ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0}));
  REQUIRE(saved);
  REQUIRE(saved->status == 0);
  RawClient cut = ConnectedWithRing(d, "the save cut short");
  const std::vector<pid_t> workers = ThreadsNamed(d.pid(), "atraced-io");
  REQUIRE(workers.size() == 1);
  std::vector<std::string> paths;
  {
    HeldWorker worker(d.pid(), workers[0]);
    REQUIRE(cut.Send(ATR_OP_RING_SAVE_ALL, Payload(proto::RingSaveAll{true, 0})));
    REQUIRE(worker.RunToWriteUnder(d.trace_dir()));
    auto probe = Connected(d);
    paths = ListedPaths(probe);
    REQUIRE(paths.size() == 2);
    d.Signal(SIGKILL);
    worker.ReapDead();
  }
  REQUIRE(d.Wait(30s) == 128 + SIGKILL);
  // Cut short: its ring file was made, and never written.
  CHECK(std::filesystem::file_size(d.trace_dir() + "/" + paths[1] + "/schedule_tracer_obj1.txt") == 0);

  DaemonProcess again({{}, {}, true, 10, std::nullopt, d.root()});
  REQUIRE(again.Start());
  CHECK(again.LogHas("1 event dir(s) hold a save that was cut short"));
  const std::string json = CtlOutput(again, {"list", "--json"});
  INFO(json);
  CHECK(json.find("\"path\":\"" + paths[0] + "\",\"incomplete\":false,\"job\":null") != std::string::npos);
  CHECK(json.find("\"path\":\"" + paths[1] + "\",\"incomplete\":true,\"job\":null") != std::string::npos);
  const std::string text = CtlOutput(again, {"list"});
  INFO(text);
  CHECK(LineWith(text, paths[0]).ends_with(paths[0] + "\t-\t-\t-"));
  CHECK(LineWith(text, paths[1]).ends_with(paths[1] + "\tincomplete\t-\t-"));
  CHECK(CtlOutput(again, {"status", "--json"}).find("\"incomplete_dirs\":1}") != std::string::npos);
  CHECK(CtlOutput(again, {"status"}).find("\nincomplete dirs:   1\n") != std::string::npos);
}

TEST_CASE("an order log from before saves were logged loads with every directory complete", "[hardening][shutdown]") {
  TempDir root;
  const std::string proc = "trace_1_2_20260101000000000000";
  const std::vector<std::string> events = {"schedule_event_2_20260101000000000001", "exit_event_2_20260101000000000002"};
  const std::string trace_dir = root.path() + "/atrace";
  std::string log = "# atraced order log 1\n";
  for (size_t i = 0; i < events.size(); ++i) {
    std::filesystem::create_directories(trace_dir + "/" + proc + "/" + events[i]);
    std::ofstream(trace_dir + "/" + proc + "/" + events[i] + "/schedule_tracer_obj1.txt") << "a record\n";
    log += "+ " + std::to_string(i + 1) + (i == 0 ? " h" : " e") + " 0 0 5 " + proc + "/" + events[i] + "\nc " +
           std::to_string(i + 1) + " prog\n";
  }
  std::ofstream(trace_dir + "/.atraced_order") << log;
  DaemonProcess d({{}, {}, true, 10, std::nullopt, root.path()});
  REQUIRE(d.Start());
  CHECK_FALSE(d.LogHas("cut short"));
  const std::string json = CtlOutput(d, {"list", "--json"});
  INFO(json);
  for (const std::string& e : events) {
    CHECK(json.find("\"path\":\"" + proc + "/" + e + "\",\"incomplete\":false,\"job\":null") != std::string::npos);
  }
  CHECK(json.find("\"incomplete\":true") == std::string::npos);
  CHECK(CtlOutput(d, {"status", "--json"}).find("\"incomplete_dirs\":0}") != std::string::npos);
}
