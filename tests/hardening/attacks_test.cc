// The root under attack while the daemon runs, and clients that are not who they say.
// Nothing outside the root is read, written or deleted, and the daemon re-creates what it
// needs.
#include <catch2/catch.hpp>

#include <thread>

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "support/daemon_process.h"
#include "support/daemon_helpers.h"
#include "support/raw_client.h"
#include "support/subprocess.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

TEST_CASE("a process dir swapped for a symlink is not followed", "[hardening][security]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  TempDir outside;
  auto c = Connected(d);
  std::string err;
  std::string first = c.Emit(ATR_EVENT_SCHEDULE, "a", "x", &err);
  REQUIRE(err.empty());
  std::string proc = Parent(Parent(first));
  std::filesystem::remove_all(proc);
  REQUIRE(::symlink(outside.path().c_str(), proc.c_str()) == 0);
  std::string second = c.Emit(ATR_EVENT_SCHEDULE, "b", "y", &err);
  CHECK_FALSE(err.empty());  // refused: the daemon would have to follow the link
  CHECK(ListNames(outside.path()).empty());
}

TEST_CASE("an event dir swapped for a symlink ages without touching its target", "[hardening][security]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  TempDir outside;
  WriteFile(outside / "precious", "keep");
  auto c = Connected(d);
  std::string err;
  std::string first = Parent(c.Emit(ATR_EVENT_SCHEDULE, "a", "x", &err));
  std::filesystem::remove_all(first);
  REQUIRE(::symlink(outside.path().c_str(), first.c_str()) == 0);
  for (int i = 0; i < 10; ++i) c.Emit(ATR_EVENT_SCHEDULE, "n", "x", &err);
  // Aged at once; the delete (of the symlink itself, never its target) follows in the background.
  CHECK(EventuallyGone(first));
  CHECK(ReadFile(outside / "precious") == "keep");
}

TEST_CASE("a planted symlink in atrace/ survives recovery untouched", "[hardening][security]") {
  TempDir outside;
  WriteFile(outside / "precious", "keep");
  DaemonProcess d;
  REQUIRE(d.Start());
  std::string link = d.trace_dir() + "/trace_1_1_20260101000000000000";
  REQUIRE(::symlink(outside.path().c_str(), link.c_str()) == 0);
  REQUIRE(d.Stop() == 0);
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  for (int i = 0; i < 12; ++i) c.Emit(ATR_EVENT_SCHEDULE, "n", "x", &err);
  CHECK(ReadFile(outside / "precious") == "keep");
}

TEST_CASE("atrace/ deleted while running is re-created", "[hardening]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  c.Emit(ATR_EVENT_SCHEDULE, "a", "x", &err);
  std::filesystem::remove_all(d.trace_dir());
  std::string path = c.Emit(ATR_EVENT_SCHEDULE, "b", "y", &err);
  CHECK(err.empty());
  CHECK(ReadFile(path) == "y");
  CHECK(Mode(d.trace_dir()) == 0750);
}

TEST_CASE("atrace/ renamed while running is noticed and re-created", "[hardening]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  auto c = Connected(d);
  std::string err;
  c.Emit(ATR_EVENT_SCHEDULE, "a", "x", &err);
  REQUIRE(err.empty());
  const std::string old_dir = d.root() + "/atrace.old";
  REQUIRE(::rename(d.trace_dir().c_str(), old_dir.c_str()) == 0);
  // Noticed on the status tick (every 2 s): the path no longer names the directory held.
  const auto renamed = std::chrono::steady_clock::now();
  REQUIRE(d.WaitForLog("was deleted or renamed while running; re-created it. 1 event dir(s) left behind"));
  Measure("renamed_root.noticed_ms",
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - renamed).count());
  CHECK(Mode(d.trace_dir()) == 0750);
  std::string after = c.Emit(ATR_EVENT_SCHEDULE, "b", "y", &err);
  CHECK(err.empty());
  CHECK(after.rfind(d.trace_dir() + "/", 0) == 0);
  CHECK(ReadFile(after) == "y");  // the path in the reply exists
  CHECK(Exists(d.trace_dir() + "/.atraced_order"));
  CHECK(CountEventDirs(old_dir, "schedule") == 1);  // the moved tree is left alone
  CHECK(QueryStatus(c).host_dirs == 1);                  // and no longer counted
  // A restart finds the new tree consistent.
  REQUIRE(d.Stop() == 0);
  REQUIRE(d.Start());
  auto again = Connected(d);
  CHECK(QueryStatus(again).host_dirs == 1);
}

TEST_CASE("a planted hard link is refused, not written through", "[hardening][security]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  TempDir outside;
  WriteFile(outside / "target", "original");
  auto c = Connected(d);
  proto::EventBegin b = BeginRequest(1);
  auto begun = c.Call(ATR_OP_EVENT_BEGIN, Payload(b));
  proto::PathReply dir;
  REQUIRE(proto::Decode(begun->body, &dir).ok());
  if (::link((outside / "target").c_str(), (dir.path + "/schedule_tracer_victim.txt").c_str()) != 0) {
    WARN("skipped: cannot hard-link across these directories");
    return;
  }
  proto::FileOpen o = ObjectFileRequest(1, 1, "victim");
  auto r = c.Call(ATR_OP_FILE_OPEN, Payload(o));
  CHECK(r->status == ATR_EACCES);
  CHECK(ReadFile(outside / "target") == "original");
}

TEST_CASE("an unprivileged client cannot claim other processes or reach other dirs", "[hardening][security]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to run a second, unprivileged client");
    return;
  }
  const gid_t nogroup = 65534;
  const uid_t nobody = 65534;
  const struct group* g = ::getgrgid(nogroup);
  REQUIRE(g != nullptr);
  DaemonProcess d({{"--socket-group", g->gr_name}, {}, true, 10});
  REQUIRE(d.Start());
  struct stat st {};
  REQUIRE(::stat(d.socket().c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0660);
  CHECK(st.st_gid == nogroup);
  // The socket's directory must be reachable by the test user.
  ::chmod(d.tmp().path().c_str(), 0755);

  SECTION("a forwarder claim is refused and logged") {
    int rc = InChild([&] {
      auto c = RawClient::Connect(d.socket());
      if (!c || !c->Hello()) return 2;
      proto::EventBegin b = BeginRequest(1);
      b.side = ATR_SIDE_DEVICE;
      b.host_pid = static_cast<int32_t>(::getppid());
      auto r = c->Call(ATR_OP_EVENT_BEGIN, Payload(b));
      return r && r->status == ATR_EPERM ? 0 : 3;
    }, nobody);
    CHECK(rc == 0);
    CHECK(d.WaitForLog("forwarder claim refused"));
    CHECK(d.LogHas("uid 65534"));
  }
  SECTION("its own events land in its own process dir, owned by uid in the listing") {
    std::string parent_dir;
    {
      auto c = Connected(d);
      std::string err;
      parent_dir = Parent(Parent(c.Emit(ATR_EVENT_SCHEDULE, "mine", "x", &err)));
    }
    int rc = InChild([&] {
      auto c = RawClient::Connect(d.socket());
      if (!c || !c->Hello()) return 2;
      std::string err;
      std::string path = c->Emit(ATR_EVENT_SCHEDULE, "theirs", "y", &err);
      if (!err.empty()) return 3;
      if (Parent(Parent(path)) == parent_dir) return 4;
      std::string bad = c->Emit(ATR_EVENT_SCHEDULE, "../../etc/x", "z", &err);
      return bad.empty() && err.find("object name") != std::string::npos ? 0 : 5;
    }, nobody);
    CHECK(rc == 0);
    auto c = Connected(d);
    auto r = c.Call(ATR_OP_LIST, Payload(proto::ListRequest{0, 100}));
    proto::ListReply list;
    REQUIRE(proto::Decode(r->body, &list).ok());
    bool saw_nobody = false;
    for (auto& e : list.entries) saw_nobody = saw_nobody || e.uid == nobody;
    CHECK(saw_nobody);
  }
  SECTION("a user outside the socket's group cannot connect") {
    int rc = InChild([&] { return RawClient::Connect(d.socket()) ? 1 : 0; }, 65533);
    CHECK(rc == 0);
  }
}

TEST_CASE("an unprivileged user's DEVICE_STATS can neither hide another process's losses nor touch the daemon's counts",
          "[hardening][security]") {
  // The receivers' counts in STATUS are the processes' word, summed (PROTOCOL.md). What must
  // hold: a process reports only for a device it wrote device events for (no device can be
  // forged into the list); a sum never wraps back under what was counted (a lying user
  // cannot make root's drops read 0) nor saturates (root's later drops still show: issue 37
  // saw device 0 frozen at 2^64 - 1); what the daemon counts itself (device events, device
  // dirs) moves only with real events.
  if (::geteuid() != 0) {
    WARN("skipped: needs root to run a second, unprivileged client");
    return;
  }
  const uid_t nobody = 65534;
  const struct group* g = ::getgrgid(65534);
  REQUIRE(g != nullptr);
  DaemonProcess d({{"--socket-group", g->gr_name}, {}, true, 10});
  REQUIRE(d.Start());
  ::chmod(d.tmp().path().c_str(), 0755);
  auto root = RawClient::Connect(d.socket());
  REQUIRE(root);
  uint64_t granted = 0;
  REQUIRE(root->Hello(ATR_FEATURE_DEVICE_STATS, &granted));
  REQUIRE((granted & ATR_FEATURE_DEVICE_STATS) != 0);
  std::string err;
  REQUIRE_FALSE(root->Emit(ATR_EVENT_SCHEDULE, "ts", "a", &err, ATR_SIDE_DEVICE, 3).empty());
  REQUIRE_FALSE(root->Emit(ATR_EVENT_SCHEDULE, "ts", "b", &err, ATR_SIDE_DEVICE, 3).empty());
  auto r = root->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, 10, 4, 0));
  REQUIRE(r);
  REQUIRE(r->status == 0);

  constexpr uint64_t kMaxPerUid = uint64_t{1} << 48;  // device_reports.h
  const int rc = InChild([&] {
    auto c = RawClient::Connect(d.socket());
    uint64_t got = 0;
    if (!c || !c->Hello(ATR_FEATURE_DEVICE_STATS, &got) || !(got & ATR_FEATURE_DEVICE_STATS)) return 2;
    // Forgery: a device nobody has, and root's device, for which this process wrote nothing.
    auto fake = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(7, 1, 1, 1));
    if (!fake || fake->status != ATR_EPERM) return 3;
    auto not_mine = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, 1, 1, 1));
    if (!not_mine || not_mine->status != ATR_EPERM) return 4;
    // One device event of its own makes it a receiver of device 3; then the freeze: sized
    // so that a wrapping sum would land on small numbers (10 + (2^64 - 9) = 1, 4 + (2^64 -
    // 4) = 0) and a saturating one at 2^64 - 1, where root's next drops would not show.
    std::string emit_error;
    if (c->Emit(ATR_EVENT_SCHEDULE, "ts", "c", &emit_error, ATR_SIDE_DEVICE, 3).empty()) return 5;
    auto lie = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, UINT64_MAX - 8, UINT64_MAX - 3, 7));
    if (!lie || lie->status != 0) return 6;
    auto again = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, UINT64_MAX, UINT64_MAX, 0));
    if (!again || again->status != 0) return 7;
    auto out_of_range = c->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(ATR_MAX_DEVICE_ID + 1, 1, 1, 1));
    if (!out_of_range || out_of_range->status != ATR_EINVAL) return 8;
    return 0;
  }, nobody);
  REQUIRE(rc == 0);

  proto::StatusReply s = QueryStatus(*root);
  REQUIRE(s.devices.devices.size() == 1);  // nothing listed for device 7 or the refused id
  const auto& three = s.devices.devices[0];
  CHECK(three.device_id == 3);
  CHECK(three.events == 3);  // the daemon's own count: three device-side events, whoever says more
  CHECK(s.device_dirs == 3);
  CHECK(three.received == 10 + kMaxPerUid);  // the liar's share capped, not wrapped to 1 nor saturated
  CHECK(three.saved == 2 + 1);  // each saved no more than the device events it wrote
  CHECK(three.dropped_invalid == 4 + kMaxPerUid);  // root's 4 drops cannot be made to read 0
  CHECK(three.reconnects == 7);
  // Root's real losses still move the total.
  r = root->Call(ATR_OP_DEVICE_STATS, DeviceStatsPayload(3, 0, 5, 0));
  REQUIRE(r);
  REQUIRE(r->status == 0);
  s = QueryStatus(*root);
  REQUIRE(s.devices.devices.size() == 1);
  CHECK(s.devices.devices[0].dropped_invalid == 9 + kMaxPerUid);
}

TEST_CASE("small ones: escaped log lines, calendar times, a root with a trailing slash, -ENOENT for a closed id",
          "[hardening]") {
  SECTION("a newline in ASCEND_TRACE_RECORD_NUM cannot split or forge a log line") {
    DaemonProcess d({{}, {{"ASCEND_TRACE_RECORD_NUM", "12\n<3>atraced: forged"}}, true, std::nullopt});
    REQUIRE(d.Start());
    CHECK(d.LogHas("12\\n<3>atraced: forged"));
    CHECK(d.log().find("\n<3>atraced: forged") == std::string::npos);
  }
  SECTION("event times must be calendar dates") {
    DaemonProcess d;
    REQUIRE(d.Start());
    auto c = Connected(d);
    for (const char* t : {"20240231000000000000", "00000101000000000000", "20230229120000000000"}) {
      CAPTURE(t);
      proto::EventBegin b = BeginRequest(1);
      b.side = ATR_SIDE_DEVICE;
      b.time = t;
      auto r = c.Call(ATR_OP_EVENT_BEGIN, Payload(b));
      REQUIRE(r);
      CHECK(r->status == ATR_EINVAL);
      CHECK(r->message.rfind("time: ", 0) == 0);
    }
    proto::EventBegin ok = BeginRequest(2);
    ok.side = ATR_SIDE_DEVICE;
    ok.time = "20240229235959000000";
    CHECK(c.Call(ATR_OP_EVENT_BEGIN, Payload(ok))->status == 0);
  }
  SECTION("a root given with trailing slashes gives no doubled slash") {
    TempDir where;
    DaemonProcess d({{"--root", where.path() + "///"}, {}, false, 10});
    REQUIRE(d.Start());
    auto c = Connected(d);
    std::string err;
    std::string path = c.Emit(ATR_EVENT_SCHEDULE, "a", "x", &err);
    CHECK(err.empty());
    CHECK(path.rfind(where.path() + "/atrace/", 0) == 0);
    CHECK(path.find("//") == std::string::npos);
    CHECK_FALSE(d.LogHas("//atrace"));
  }
  SECTION("a closed file id is unknown: -ENOENT, as PROTOCOL.md says") {
    DaemonProcess d;
    REQUIRE(d.Start());
    auto c = Connected(d);
    REQUIRE(c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(1)))->status == 0);
    REQUIRE(c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "x")))->status == 0);
    REQUIRE(c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}))->status == 0);
    const std::string data = "late";
    auto r = c.Call(ATR_OP_FILE_APPEND,
                    Payload(proto::FileAppend{1, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}}));
    CHECK(r->status == ATR_ENOENT);
    CHECK(c.Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}))->status == ATR_ENOENT);
    CHECK(c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}))->status == ATR_ENOENT);
  }
}
