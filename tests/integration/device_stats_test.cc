// STATUS's devices block and DEVICE_STATS (issue 24), against the built daemon: what an
// operator reads in `atracectl status` about each NPU's traces.
#include <catch2/catch.hpp>

#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"

using namespace atraced;
using namespace atraced::testing;


TEST_CASE("devices: device events are counted per device, and DEVICE_STATS adds a process's counts", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  uint64_t granted = 0;
  REQUIRE(c->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_DEVICE_STATS, &granted));
  REQUIRE((granted & ATR_FEATURE_DEVICE_STATS) != 0);

  proto::StatusReply s = QueryStatus(*c);
  REQUIRE(s.devices.present);
  CHECK(s.devices.devices.empty());  // nothing counted, nothing listed

  std::string err;
  REQUIRE_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "obj", "x", &err, ATR_SIDE_DEVICE, 7).empty());
  REQUIRE_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "obj", "y", &err, ATR_SIDE_DEVICE, 7).empty());
  REQUIRE_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "obj", "z", &err, ATR_SIDE_DEVICE, 2).empty());
  REQUIRE_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "obj", "h", &err).empty());  // a host event counts for no device
  auto r = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(7, 5, 2, 1));
  REQUIRE(r);
  CHECK(r->status == 0);
  r = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(7, 1, 0, 0));
  REQUIRE(r);
  CHECK(r->status == 0);

  s = QueryStatus(*c);
  REQUIRE(s.devices.devices.size() == 2);
  const auto& two = s.devices.devices[0];
  const auto& seven = s.devices.devices[1];
  CHECK(two.device_id == 2);
  CHECK(two.events == 1);
  CHECK(two.received == 0);
  CHECK(seven.device_id == 7);
  CHECK(seven.events == 2);
  CHECK(seven.received == 6);
  CHECK(seven.saved == 2);  // said 6, but the daemon took 2 device events from this process
  CHECK(seven.dropped_invalid == 2);
  CHECK(seven.reconnects == 1);
}

TEST_CASE("devices: DEVICE_STATS without the feature, or out of range, is refused and counts nothing", "[integration]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto plain = RawClient::Connect(d.socket());
  REQUIRE(plain);
  REQUIRE(plain->Hello(ATR_FEATURE_FD_PASSING));
  auto r = plain->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(1, 9, 0, 0));
  REQUIRE(r);
  CHECK(r->status == ATR_ENOTSUP);
  CHECK_THAT(r->message, Catch::Contains("ATR_FEATURE_DEVICE_STATS"));

  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_DEVICE_STATS));
  r = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(1024, 9, 0, 0));
  REQUIRE(r);
  CHECK(r->status == ATR_EINVAL);
  CHECK_THAT(r->message, Catch::Contains("device_id"));
  std::vector<uint8_t> short_payload = DeviceStatsPayload(1, 9, 0, 0);
  short_payload.pop_back();
  r = c->Call(ATR_OP_DEVICE_STATS, short_payload);
  REQUIRE(r);
  CHECK(r->status == ATR_EBADMSG);
  std::vector<uint8_t> reserved = DeviceStatsPayload(1, 9, 0, 0);
  reserved[4] = 1;
  r = c->Call(ATR_OP_DEVICE_STATS, reserved);
  REQUIRE(r);
  CHECK(r->status == ATR_EINVAL);
  CHECK(QueryStatus(*c).devices.devices.empty());

  // A process reports only for a device it wrote device events for.
  r = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, 5, 0, 0));
  REQUIRE(r);
  CHECK(r->status == ATR_EPERM);
  CHECK_THAT(r->message, Catch::Contains("no device event for device 3"));
  CHECK(QueryStatus(*c).devices.devices.empty());

  // A lying process can neither wrap the totals nor saturate them: its uid's share of a
  // figure stops at 2^48.
  std::string err;
  REQUIRE_FALSE(c->Emit(ATR_EVENT_SCHEDULE, "obj", "x", &err, ATR_SIDE_DEVICE, 3).empty());
  REQUIRE(c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, UINT64_MAX, 0, 0))->status == 0);
  REQUIRE(c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, 5, 0, 0))->status == 0);
  auto s = QueryStatus(*c);
  REQUIRE(s.devices.devices.size() == 1);
  CHECK(s.devices.devices[0].received == uint64_t{1} << 48);
  CHECK(s.devices.devices[0].saved == 1);
}
