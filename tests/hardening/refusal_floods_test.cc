// Issue 37, defect 7, against the real binary: an unprivileged user (uid 65534) floods every
// way the daemon can refuse it, and the journal gets one line per interval for that uid, not
// one per request (10,000 lines trip journald's rate limit, which then drops other users'
// crash notices).
//
// The refusal log sites of the daemon, found by grepping it for its refusal lines, and the
// requests below that reach each:
//   - the dispatcher's "refused OP from pid P uid U" (trace_service.cc), which every handler's
//     refusal goes through: an unknown file, a forwarder claim, a vacuum beyond the limits,
//     a ring refused;
//   - the listener's "shedding connection" (listener.cc): connections over the uid's share;
//   - the rate limit's "suppressed N events" (admission.cc): events over the burst.
// The store's "refusing writes (ENOSPC) ... for uid U" line asks the same throttle
// (store_tests "[refusals]").
#include <catch2/catch.hpp>

#include <unistd.h>

#include <sstream>
#include <thread>

#include "as_user.h"
#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/test_rings.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kFlood = 300;  // requests per path

// Lines of `log` past its first `from` bytes that are refusal lines of any path.
size_t RefusalLines(const std::string& log, size_t from) {
  std::istringstream in(log.substr(std::min(from, log.size())));
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("refused") != std::string::npos || line.find("shedding connection") != std::string::npos ||
        line.find("suppressed") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

// Sends `request` `kFlood` times on `c`; how many got `status`.
template <class Send>
int Flood(int32_t status, Send request) {
  int got = 0;
  for (int i = 0; i < kFlood; ++i) {
    auto r = request(i);
    got += r && r->status == status;
  }
  return got;
}

}  // namespace

TEST_CASE("attack: one user's flood of refusals on every path is one log line per interval",
          "[hardening][security][refusals]") {
  if (!NeedsRoot()) return;
  DaemonProcess d(ForAttacker({"--max-clients", "64", "--rate-limit-burst", "1", "--rate-limit-interval", "1s"}));
  REQUIRE(StartForAttacker(d));
  const size_t before = d.log().size();
  const auto started = std::chrono::steady_clock::now();
  Attacker attacker([&d](int out, int in) {
    auto c = RawClient::Connect(d.socket());
    if (!c || !c->Hello(ATR_FEATURE_MEMFD)) return Report(out, -1, "no connection");
    std::string counts;
    // An unknown file: a handler's plain refusal.
    proto::IdRequest close;
    close.id = 9999;
    counts += std::to_string(Flood(ATR_ENOENT, [&](int) { return c->Call(ATR_OP_FILE_CLOSE, Payload(close)); })) + " ";
    // A forwarder claim for the test's own process.
    counts += std::to_string(Flood(ATR_EPERM, [&](int i) {
                proto::EventBegin b = BeginRequest(static_cast<uint32_t>(1000 + i));
                b.side = ATR_SIDE_DEVICE;
                b.host_pid = static_cast<int32_t>(::getppid());
                return c->Call(ATR_OP_EVENT_BEGIN, Payload(b));
              })) + " ";
    // A vacuum beyond the configured limits.
    const proto::VacuumBy vacuum{false, ATR_VACUUM_KEEP, 1, 0, 0};
    counts += std::to_string(Flood(ATR_EPERM, [&](int) { return c->Call(ATR_OP_VACUUM_BY, Payload(vacuum)); })) + " ";
    // A ring refused (a counter ring without the feature).
    UniqueFd memfd = EmptyRing();
    counts += std::to_string(Flood(ATR_ENOTSUP, [&](int i) {
                proto::RingRegister m;
                m.object_id = static_cast<uint32_t>(i + 1);
                m.flags = ATR_RING_COUNTER;
                m.msg_num = 4;
                m.msg_size = 64;
                m.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));
                m.name = "flood";
                return c->CallWithFd(ATR_OP_RING_REGISTER, Payload(m), memfd.get());
              })) + " ";
    // Events over the rate limit's burst of 1 a second (most are refused: a slow machine
    // gets a token back each second).
    const int limited = Flood(ATR_EAGAIN, [&](int i) {
      return c->Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(static_cast<uint32_t>(2000 + i))));
    });
    counts += std::string(limited >= kFlood / 2 ? "most" : std::to_string(limited)) + " ";
    // Connections over the uid's share (25% of 64: 16, this one included): shed.
    std::vector<RawClient> held;
    int shed = 0;
    for (int i = 0; i < kFlood + 16; ++i) {
      auto more = RawClient::Connect(d.socket());
      if (!more) continue;
      if (more->Hello()) {
        held.push_back(std::move(*more));
      } else {
        ++shed;
      }
    }
    counts += std::to_string(shed);
    Report(out, 0, counts);
    WaitRelease(in);
  });
  const std::string counts = attacker.Line(120s);
  INFO(counts);
  const std::string all = std::to_string(kFlood);
  CHECK(counts == "0 " + all + " " + all + " " + all + " " + all + " most " + std::to_string(kFlood + 1) + "\n");
  // The rate limit's summary comes once the uid's next line is due (10 s after its first),
  // and counts the other refusals not logged meanwhile.
  CHECK(d.WaitForLog(" events from pid " + std::to_string(attacker.pid), 60s));
  INFO(d.log().substr(before));
  // One line when the flood began, the summary, and one more per 10 s the flood took on a
  // slow machine: never one per request (before: more than 900).
  const auto waited_s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started);
  CHECK(RefusalLines(d.log(), before) <= 2 + static_cast<size_t>(waited_s.count() / 10));
  CHECK(d.LogHas("more refusals for this uid since its last line"));
  // Another uid's refusal is still logged at once.
  auto root = Connected(d);
  proto::IdRequest close;
  close.id = 9999;
  REQUIRE(root.Call(ATR_OP_FILE_CLOSE, Payload(close)));
  CHECK(d.WaitForLog("refused FILE_CLOSE from pid " + std::to_string(::getpid()) + " uid 0"));
}
