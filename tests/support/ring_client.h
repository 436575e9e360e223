// A 1.1 client of a running daemon with one ring registered (object 1, "obj1") that holds
// one record: what a save test needs before it asks for a save.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/test_rings.h"

namespace atraced::testing {

inline RawClient ConnectedWithRing(const DaemonProcess& d, const std::string& record) {
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello(ATR_FEATURE_MEMFD));
  UniqueFd ring = RingWith({record});
  auto r = c->CallWithFd(ATR_OP_RING_REGISTER, RegisterPayload(1), ring.get());
  REQUIRE(r);
  REQUIRE(r->status == 0);
  return std::move(*c);
}

}  // namespace atraced::testing
