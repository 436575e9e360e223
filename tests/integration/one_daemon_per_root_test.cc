// One daemon per trace root (issue 23, finding 1): a second atraced on a root that a running
// one serves, on a socket of its own, must not start beside it.
#include <catch2/catch.hpp>

#include <string>

#include "support/daemon_process.h"
#include "support/raw_client.h"

using namespace atraced;
using namespace atraced::testing;

TEST_CASE("a second daemon on a root already served exits 1 naming the root and the holder's pid",
          "[integration][root][lock]") {
  DaemonProcess first;
  REQUIRE(first.Start());
  DaemonProcess::Options o;
  o.root = first.root();
  DaemonProcess second(o);
  CHECK_FALSE(second.Start(std::chrono::seconds(10)));
  CHECK(second.exited_during_start() == 1);
  INFO(second.log());
  CHECK(second.LogHas("is already served by another atraced (pid " + std::to_string(first.pid()) + ")"));
  CHECK(second.LogHas(first.trace_dir()));
  CHECK_FALSE(second.LogHas("atraced ready"));
  // The first one serves on, alone.
  auto c = RawClient::Connect(first.socket());
  REQUIRE(c);
  REQUIRE(c->Hello());
  std::string error;
  CHECK(!c->Emit(ATR_EVENT_SCHEDULE, "after", "x\n", &error).empty());
  CHECK(error.empty());
}

TEST_CASE("the root's lock goes with its daemon, however it ends", "[integration][root][lock]") {
  DaemonProcess first;
  REQUIRE(first.Start());
  const int sig = GENERATE(15, 9);  // a clean stop, and SIGKILL, which leaves no time to clean up
  first.Stop(sig);
  DaemonProcess::Options o;
  o.root = first.root();
  DaemonProcess next(o);
  REQUIRE(next.Start());
  CHECK(next.LogHas("atraced ready"));
}
