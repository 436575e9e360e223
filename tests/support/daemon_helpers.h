// Catch2 helpers shared by the tests that drive the daemon binary. Header-only because it
// asserts with REQUIRE, which only test binaries link.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "support/daemon_process.h"
#include "support/raw_client.h"

namespace atraced::testing {

// A connection to `d` that has said HELLO (with fd passing).
inline RawClient Connected(const DaemonProcess& d) {
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello());
  return std::move(*c);
}

// The daemon's STATUS reply.
inline proto::StatusReply QueryStatus(RawClient& c) {
  auto r = c.Call(ATR_OP_STATUS, {});
  REQUIRE(r);
  REQUIRE(r->status == 0);
  proto::StatusReply s;
  REQUIRE(proto::Decode(r->body, &s).ok());
  return s;
}

// A measured value for docs/RELIABILITY.md: scripts/reliability.sh collects these lines
// from the tests' own output.
template <class T>
inline void Measure(const std::string& key, const T& value) {
  std::printf("reliability: %s=%s\n", key.c_str(), std::to_string(value).c_str());
  std::fflush(stdout);
}

inline std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

// A DEVICE_STATS request: what a process's receiver for `device` says it counted (saved as
// many as received).
inline std::vector<uint8_t> DeviceStatsPayload(uint32_t device, uint64_t received, uint64_t dropped_invalid,
                                               uint64_t reconnects) {
  proto::DeviceStats m;
  m.device_id = device;
  m.received = received;
  m.saved = received;
  m.dropped_invalid = dropped_invalid;
  m.reconnects = reconnects;
  std::vector<uint8_t> out;
  proto::Encode(m, out);
  return out;
}

}  // namespace atraced::testing
