// Descriptor exhaustion by one user, against the real binary (issue 14, defect 1). Before
// the budget, four connections of one uid holding 256 files each made root's next
// EVENT_BEGIN fail with -EMFILE on a limit of 1024.
#include <catch2/catch.hpp>

#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

struct HogResult {
  int connections = 0;     // connections that got through HELLO
  int files = 0;           // files opened
  int refused_busy = 0;    // FILE_OPEN answered -EBUSY (the uid's share)
  int refused_other = 0;   // any other refusal
  int shed = 0;            // connections closed at once
};

// One user grabbing all it can: `conns` connections, each with one event and up to
// `files_each` files, then `extra` more connections. Keeps them in `held`.
HogResult Hog(const std::string& socket, int conns, int files_each, int extra, std::vector<RawClient>* held) {
  HogResult r;
  uint32_t fid = 1;
  for (int i = 0; i < conns + extra; ++i) {
    auto c = RawClient::Connect(socket);
    if (!c) continue;
    if (!c->Hello()) {
      ++r.shed;
      continue;
    }
    ++r.connections;
    if (i < conns && c->Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(1)))->status == 0) {
      for (int f = 0; f < files_each; ++f) {
        auto reply = c->Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, fid, "f" + std::to_string(fid))));
        ++fid;
        if (!reply) break;
        if (reply->status == 0) ++r.files;
        else if (reply->status == ATR_EBUSY) ++r.refused_busy;
        else ++r.refused_other;
        if (reply->status != 0) break;
      }
    }
    held->push_back(std::move(*c));
  }
  return r;
}

}  // namespace

TEST_CASE("one uid holds at most its share of descriptors and over it connections are shed", "[hardening][fds]") {
  // Limit 1024: 320 reserved, 704 for clients; a share of 10% is 70 per uid.
  DaemonProcess d({{"--uid-descriptor-share", "10"}, {}, true, 10, 1024});
  REQUIRE(d.Start());
  REQUIRE(d.LogHas("descriptor budget: 704 for clients, at most 70 per uid"));
  const size_t fds_before = d.OpenFds();
  std::vector<RawClient> held;
  HogResult r = Hog(d.socket(), 4, 256, 50, &held);
  Measure("uid_share.files_opened", r.files);
  Measure("uid_share.connections", r.connections);
  Measure("uid_share.connections_shed", r.shed);
  CHECK(r.connections + r.files == 70);  // exactly the share, connections and files together
  CHECK(r.refused_busy >= 1);
  CHECK(r.refused_other == 0);
  CHECK(r.shed == 4 + 50 - r.connections);
  // One line per interval per uid, whether a request or a connection was refused.
  CHECK(d.WaitForLog("its share (70 of 704, uid-descriptor-share)"));
  // Refusals are logged once per interval per uid, not once per request.
  const std::string log = d.log();
  size_t lines = 0;
  for (size_t at = log.find("uid-descriptor-share)"); at != std::string::npos; at = log.find("uid-descriptor-share)", at + 1)) ++lines;
  CHECK(lines <= 2);
  CHECK(d.OpenFds() <= fds_before + 70 + 2);
  held.clear();
  // Released: the same uid is served again, once the daemon has seen them close (on a loaded
  // machine that is not within any fixed time, so it is asked until it serves, or 20 s).
  std::string path, err;
  for (const auto until = std::chrono::steady_clock::now() + 20s;
       path.empty() && std::chrono::steady_clock::now() < until;) {
    auto c = RawClient::Connect(d.socket());
    if (c && c->Hello()) path = c->Emit(ATR_EVENT_SCHEDULE, "again", "ok", &err);
    if (path.empty()) std::this_thread::sleep_for(50ms);
  }
  INFO(err);
  CHECK_FALSE(path.empty());
}

TEST_CASE("an unprivileged user with any number of connections cannot make root's event fail", "[hardening][fds][security]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to run a second, unprivileged user");
    return;
  }
  const gid_t nogroup = 65534;
  const uid_t nobody = 65534;
  const struct group* g = ::getgrgid(nogroup);
  REQUIRE(g != nullptr);
  // The reproduction: a soft limit of 1024, the default share (25%: 176 of 704).
  DaemonProcess d({{"--socket-group", g->gr_name}, {}, true, 10, 1024});
  REQUIRE(d.Start());
  ::chmod(d.tmp().path().c_str(), 0755);
  int report[2], done[2];
  REQUIRE(::pipe(report) == 0);
  REQUIRE(::pipe(done) == 0);
  pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(nobody) != 0 || ::setuid(nobody) != 0) ::_exit(90);
    std::vector<RawClient> held;
    // Four connections with 256 files each, then 2000 more connections.
    HogResult r = Hog(d.socket(), 4, 256, 2000, &held);
    (void)!::write(report[1], &r, sizeof r);
    char c;
    (void)!::read(done[0], &c, 1);  // hold everything until root has tried
    ::_exit(0);
  }
  HogResult r{};
  REQUIRE(::read(report[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r));
  Measure("two_users.nobody_files", r.files);
  Measure("two_users.nobody_connections", r.connections);
  Measure("two_users.nobody_connections_shed", r.shed);
  Measure("two_users.daemon_fds_while_held", d.OpenFds());
  CHECK(r.connections + r.files == 176);
  CHECK(r.refused_busy >= 1);
  // Root is served while the other user holds all it can.
  auto c = Connected(d);
  proto::EventBegin b = BeginRequest(1);
  auto begun = c.Call(ATR_OP_EVENT_BEGIN, Payload(b));
  REQUIRE(begun);
  CHECK(begun->status == 0);
  CHECK(c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "root")))->status == 0);
  CHECK(c.Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}))->status == 0);
  CHECK(c.fds().size() == 1);
  auto c2 = Connected(d);
  std::string err;
  CHECK_FALSE(c2.Emit(ATR_EVENT_SCHEDULE, "root2", "ok", &err).empty());
  CHECK(err.empty());
  CHECK(d.LogHas("uid 65534 holds 176 daemon descriptors, its share (176 of 704"));
  (void)!::write(done[1], "x", 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (int fd : {report[0], report[1], done[0], done[1]}) ::close(fd);
}
