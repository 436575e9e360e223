// atrace_client_list_live against the real daemon: granted only when asked for in HELLO (a
// client that does not ask, as every 1.1 client before it, is unchanged and gets -ENOTSUP),
// its job checked before anything is sent, and a connection of its own not listed.
#include <catch2/catch.hpp>

#include <errno.h>

#include <vector>

#include "atraced/atrace_client.h"
#include "atraced/atrace_client.hpp"
#include "support/daemon_process.h"

using namespace atraced::testing;

namespace {

atrace_client* Open(const std::string& socket, unsigned flags) {
  atrace_client_options o;
  atrace_client_options_init(&o);
  o.socket_path = socket.c_str();
  o.flags = flags;
  atrace_client* c = nullptr;
  REQUIRE(atrace_client_open(&o, &c) == 0);
  return c;
}

int Count(const atrace_live_entry*, void* user) {
  ++*static_cast<int*>(user);
  return 0;
}

}  // namespace

TEST_CASE("list_live: granted only with ATRACE_OPT_LIST_LIVE, a bad job refused before sending", "[client][list_live]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  int n = 0;
  uint32_t omitted = 7;
  atrace_client* plain = Open(d.socket(), 0);
  CHECK(atrace_client_list_live(plain, nullptr, Count, &n, &omitted) == -ENOTSUP);
  CHECK(omitted == 0);
  atrace_client_close(plain);

  atrace_client* asking = Open(d.socket(), ATRACE_OPT_LIST_LIVE);
  // No process holds rings: nothing listed, and this handle's own connection is not one.
  CHECK(atrace_client_list_live(asking, nullptr, Count, &n, &omitted) == 0);
  CHECK(atrace_client_list_live(asking, "J1", Count, &n, &omitted) == 0);
  CHECK(n == 0);
  CHECK(atrace_client_list_live(asking, "J 1", Count, &n, nullptr) == -EINVAL);
  CHECK(atrace_client_list_live(asking, std::string(65, 'j').c_str(), Count, &n, nullptr) == -EINVAL);
  CHECK(atrace_client_list_live(asking, nullptr, nullptr, nullptr, nullptr) == -EINVAL);
  CHECK(atrace_client_list_live(nullptr, nullptr, Count, &n, nullptr) == -EINVAL);
  // The handle stays usable after the refusals.
  atrace_status s{};
  CHECK(atrace_client_status_ex(asking, &s, sizeof s) == 0);
  atrace_client_close(asking);
}
