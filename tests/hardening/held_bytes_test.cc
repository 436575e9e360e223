// Issue 37, defect 14, against the real binary on a 64 MiB root: bytes an unprivileged user
// (uid 65534) writes through the descriptor of a file it has closed cost that user alone.
// They asked no limit first and aging cannot free them while the descriptor is open, so no
// other user's directory is aged for them and no other user's event is refused; the
// holder's own requests are, until it closes the descriptor.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "as_user.h"
#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/small_fs.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kFsBytes = 64u << 20;
constexpr int kHiddenMiB = 58;

// One event with one object file of `bytes`, closed and ended; the status of the first failure.
int32_t SmallEvent(RawClient& c, uint32_t id, size_t bytes) {
  auto begun = c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(id)));
  REQUIRE(begun);
  if (begun->status != 0) return begun->status;
  auto opened = c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(id, id, "obj" + std::to_string(id))));
  REQUIRE(opened);
  if (opened->status != 0) return opened->status;
  const std::string data(bytes, 'v');
  auto appended = c.Call(ATR_OP_FILE_APPEND,
                         Payload(proto::FileAppend{id, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}}));
  REQUIRE(appended);
  if (appended->status != 0) return appended->status;
  REQUIRE(c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{id}))->status == 0);
  REQUIRE(c.Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{id}))->status == 0);
  return 0;
}

// The listed directories made by `uid`.
std::vector<std::string> DirsOf(RawClient& c, uint32_t uid) {
  auto r = c.Call(ATR_OP_LIST, Payload(proto::ListRequest{0, 1000}));
  REQUIRE(r);
  REQUIRE(r->status == 0);
  proto::ListReply list;
  REQUIRE(proto::Decode(r->body, &list).ok());
  std::vector<std::string> out;
  for (const auto& e : list.entries) {
    if (e.uid == uid) out.push_back(e.path);
  }
  return out;
}

}  // namespace

TEST_CASE("attack: bytes hidden behind a closed passed descriptor cost only their holder",
          "[hardening][security][bytes]") {
  if (!NeedsRoot()) return;
  SmallFs fs(kFsBytes);
  if (!fs.mounted()) {
    WARN("skipped: mount(2) of a tmpfs was refused here");
    return;
  }
  // The default limits: max-use 10% (6.4 MiB), keep-free 15% (9.6 MiB).
  DaemonProcess::Options o = ForAttacker();
  o.root = fs.path();
  DaemonProcess d(o);
  REQUIRE(StartForAttacker(d));
  auto victim = Connected(d);
  for (uint32_t id = 1; id <= 3; ++id) REQUIRE(SmallEvent(victim, id, 64 << 10) == 0);
  const std::vector<std::string> victims_dirs = DirsOf(victim, 0);
  REQUIRE(victims_dirs.size() == 3);

  Attacker attacker([&d](int out, int in) {
    auto c = RawClient::Connect(d.socket());
    if (!c || !c->Hello()) ::_exit(91);
    UniqueFd fd = PassedFdOfClosedFile(*c, "hidden");
    const std::string chunk(1 << 20, 'x');
    int written = 0;
    for (int i = 0; i < kHiddenMiB; ++i) {
      written += ::write(fd.get(), chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size());
    }
    Report(out, written, "MiB written after FILE_CLOSE");
    WaitRelease(in);
    auto again = c->Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(8)));
    Report(out, again ? again->status : 1, again ? again->message : "no reply");
    WaitRelease(in);
    fd.reset();  // closed at last
    Report(out, 0, "closed");
    WaitRelease(in);
  });
  const std::string wrote = attacker.Line();
  INFO(wrote);
  REQUIRE(wrote == std::to_string(kHiddenMiB) + " MiB written after FILE_CLOSE\n");

  // Measured on the daemon's 2 s tick; then two more ticks of aging.
  uint64_t counted = 0;
  for (int i = 0; i < 100 && counted < (uint64_t{kHiddenMiB} << 20); ++i) {
    std::this_thread::sleep_for(100ms);
    counted = QueryStatus(victim).bytes_written;
  }
  CHECK(counted >= (uint64_t{kHiddenMiB} << 20));
  std::this_thread::sleep_for(4500ms);

  // The victim keeps its directories and its new events.
  CHECK(DirsOf(victim, 0) == victims_dirs);
  CHECK(SmallEvent(victim, 4, 4096) == 0);
  CHECK(DirsOf(victim, 0).size() == 4);
  // The holder is refused, and told why.
  attacker.Release();
  const std::string refused = attacker.Line();
  INFO(refused);
  CHECK(refused.rfind(std::to_string(ATR_ENOSPC) + " uid 65534 holds", 0) == 0);

  // Closed: its bytes are ordinary again and over the limits, so its own directory goes first.
  attacker.Release();
  REQUIRE(attacker.Line() == "0 closed\n");
  // Aging moves the directory aside at once and deletes it in the background: its blocks
  // come back when the delete is done, so both are waited for (up to 20 s on a busy machine).
  bool gone = false, freed = false;
  for (int i = 0; i < 200 && !(gone && freed); ++i) {
    std::this_thread::sleep_for(100ms);
    gone = DirsOf(victim, kAttacker).empty();
    freed = fs.available() > kFsBytes / 2;
  }
  CHECK(gone);
  CHECK(DirsOf(victim, 0).size() == 4);
  CHECK(freed);
}
