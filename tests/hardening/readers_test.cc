// Who reads what, against the real daemon run as root (issue 39): users A and B in the
// socket's group, C in the reader group. Each uid reads what was made for it, nobody else
// does, the reader group and root read all; through passed descriptors, for a forwarder's
// claimed process, across an older daemon's tree, and on a file system without ACLs.
// The crash reports and atracectl are in tests/ascend_trace/readers_test.cc.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "as_user.h"
#include "support/missing_tool.h"
#include "support/daemon_helpers.h"
#include "support/raw_client.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "support/test_users.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

// `cat FILE` as `who`: its output, or "EACCES" when it was refused for permission.
std::string CatAs(const Identity& who, const std::string& path) {
  const RunResult r = Run({"cat", path}, {.as = who});
  if (r.exit_code == 0) return r.out;
  return r.err.find("Permission denied") != std::string::npos ? "EACCES" : "failed: " + r.err;
}
std::string CatAsRoot(const std::string& path) { return CatAs(Identity{0, 0, {}}, path); }

// Runs `body(out)` as `who` in a forked child that writes one line to `out`; returns the line.
template <class F>
std::string AsUser(const Identity& who, F body) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    if (!BecomeUser(who)) ::_exit(90);
    body(p[1]);
    ::_exit(0);
  }
  ::close(p[1]);
  const std::string line = ReadReport(p[0]);
  ::close(p[0]);
  ::waitpid(pid, nullptr, 0);
  return line.empty() ? line : line.substr(0, line.size() - 1);
}

// As `who`: one schedule event through the daemon holding `text`; the file's path.
std::string EmitAs(const DaemonProcess& d, const Identity& who, const std::string& text) {
  return AsUser(who, [&](int out) {
    auto c = RawClient::Connect(d.socket());
    std::string err;
    const std::string path = c && c->Hello() ? c->Emit(ATR_EVENT_SCHEDULE, "mine", text, &err) : "";
    const std::string line = (path.empty() ? "error: " + err : path) + "\n";
    (void)!::write(out, line.data(), line.size());
  });
}

}  // namespace

TEST_CASE("readers: a file written through a passed descriptor is readable by its owner, root and the "
          "reader group only", "[hardening][security][readers]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(ReadersDaemon(u));
  REQUIRE(StartReachable(d));
  // A takes the file's descriptor, the daemon closes its own copy, A writes through it.
  const std::string path = AsUser(u.a.id, [&](int out) {
    auto c = RawClient::Connect(d.socket());
    if (!c || !c->Hello()) ::_exit(91);
    auto begun = c->Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(7)));
    auto opened = c->Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(7, 1, "passed")));
    auto got_fd = c->Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}));
    proto::PathReply p;
    if (!begun || !opened || !got_fd || got_fd->status != 0 || c->fds().empty() ||
        !proto::Decode(opened->body, &p).ok()) {
      ::_exit(92);
    }
    UniqueFd fd = std::move(c->fds().front());
    c->Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}));
    c->Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{7}));
    (void)!::write(fd.get(), "through the descriptor", 22);
    const std::string line = p.path + "\n";
    (void)!::write(out, line.data(), line.size());
  });
  REQUIRE(path.rfind(d.trace_dir() + "/", 0) == 0);
  CHECK(CatAs(u.a.id, path) == "through the descriptor");
  CHECK(CatAs(u.b.id, path) == "EACCES");
  CHECK(CatAs(u.c.id, path) == "through the descriptor");
  CHECK(CatAsRoot(path) == "through the descriptor");
  // B cannot even list A's directories, nor the trace directory.
  CHECK(Run({"ls", Parent(path)}, {.as = u.b.id}).exit_code != 0);
  CHECK(Run({"ls", d.trace_dir()}, {.as = u.a.id}).exit_code != 0);
  CHECK(Run({"ls", d.trace_dir()}, {.as = u.c.id}).exit_code == 0);
}

TEST_CASE("readers: a device-class dir a forwarder makes for A's process is A's", "[hardening][security][readers]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(ReadersDaemon(u));
  REQUIRE(StartReachable(d));
  // A's process: alive while the forwarder (root, which may claim) writes for it, and A's
  // before the claim is made (it says so on `ready`): the daemon reads its uid from /proc.
  int hold[2];
  int ready[2];
  REQUIRE(::pipe(hold) == 0);
  REQUIRE(::pipe(ready) == 0);
  const pid_t a_pid = ::fork();
  REQUIRE(a_pid >= 0);
  if (a_pid == 0) {
    ::close(hold[1]);
    ::close(ready[0]);
    if (!BecomeUser(u.a.id)) ::_exit(90);
    (void)!::write(ready[1], "r", 1);
    char c;
    (void)!::read(hold[0], &c, 1);
    ::_exit(0);
  }
  ::close(hold[0]);
  ::close(ready[1]);
  char became = 0;
  REQUIRE(::read(ready[0], &became, 1) == 1);
  ::close(ready[0]);
  std::string path;
  {
    auto forwarder = Connected(d);
    std::string err;
    path = forwarder.Emit(ATR_EVENT_SCHEDULE, "npu", "device side", &err, ATR_SIDE_DEVICE, 3, a_pid);
    INFO(err);
    REQUIRE(!path.empty());
  }
  ::close(hold[1]);
  ::waitpid(a_pid, nullptr, 0);
  CHECK(Parent(Parent(path)).find("_" + std::to_string(a_pid) + "_") != std::string::npos);
  CHECK(CatAs(u.a.id, path) == "device side");
  CHECK(CatAs(u.b.id, path) == "EACCES");
  CHECK(CatAs(u.c.id, path) == "device side");
  // The listing says whose it is: A's uid, not the forwarder's.
  auto c = Connected(d);
  auto listed = c.Call(ATR_OP_LIST, Payload(proto::ListRequest{0, 100}));
  proto::ListReply reply;
  REQUIRE(listed);
  REQUIRE(proto::Decode(listed->body, &reply).ok());
  REQUIRE(reply.entries.size() == 1);
  CHECK(reply.entries[0].uid == u.a.id.uid);
}

TEST_CASE("readers: each user reads their own traces, another user's are refused, and a restart keeps it",
          "[hardening][security][readers]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(ReadersDaemon(u));
  REQUIRE(StartReachable(d));
  const std::string a_file = EmitAs(d, u.a.id, "A's trace");
  const std::string b_file = EmitAs(d, u.b.id, "B's trace");
  REQUIRE(a_file.rfind(d.trace_dir() + "/", 0) == 0);
  REQUIRE(b_file.rfind(d.trace_dir() + "/", 0) == 0);
  for (int start = 0; start < 2; ++start) {
    INFO((start == 0 ? "first start" : "after a restart"));
    CHECK(CatAs(u.a.id, a_file) == "A's trace");
    CHECK(CatAs(u.b.id, a_file) == "EACCES");
    CHECK(CatAs(u.b.id, b_file) == "B's trace");
    CHECK(CatAs(u.a.id, b_file) == "EACCES");
    CHECK(CatAs(u.c.id, a_file) == "A's trace");
    CHECK(CatAs(u.c.id, b_file) == "B's trace");
    CHECK(CatAsRoot(b_file) == "B's trace");
    if (start == 0) {
      REQUIRE(d.Stop() == 0);
      REQUIRE(StartReachable(d));
    }
  }
}

TEST_CASE("readers: a tree an older daemon made becomes private at the first start", "[hardening][security][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("setfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(ReadersDaemon(u));
  REQUIRE(StartReachable(d));
  const std::string a_file = EmitAs(d, u.a.id, "A's trace");
  REQUIRE(a_file.rfind(d.trace_dir() + "/", 0) == 0);
  REQUIRE(d.Stop() == 0);
  // What older daemons left: no ACL, everything group-readable by the socket's group
  // (2750 root:atrace from the packages' tmpfiles, files 0640), reachable by everyone above.
  REQUIRE(Run({"setfacl", "-R", "-b", "-k", d.root()}).exit_code == 0);
  REQUIRE(Run({"chgrp", "-R", u.socket_group(), d.trace_dir()}).exit_code == 0);
  REQUIRE(Run({"chmod", "-R", "g+rX", d.trace_dir()}).exit_code == 0);
  REQUIRE(::chmod(d.trace_dir().c_str(), 02750) == 0);
  REQUIRE(::chmod(d.root().c_str(), 0755) == 0);
  // Nor did older daemons vouch for any grant in the order log (its 'g' record).
  REQUIRE(Run({"sed", "-i", "/^g /d", d.trace_dir() + "/.atraced_order"}).exit_code == 0);
  REQUIRE(CatAs(u.b.id, a_file) == "A's trace");  // what older daemons let every member of the group do

  REQUIRE(StartReachable(d));
  CHECK(d.WaitForLog("had no read grant"));
  CHECK(CatAs(u.b.id, a_file) == "EACCES");
  CHECK(CatAs(u.a.id, a_file) == "A's trace");
  CHECK(CatAs(u.c.id, a_file) == "A's trace");
  struct stat st {};
  REQUIRE(::stat(d.trace_dir().c_str(), &st) == 0);
  CHECK((st.st_mode & 07007) == 0);  // no setgid, nothing for others
}

TEST_CASE("readers: on a file system without ACLs, one warning, and only root and the reader group read",
          "[hardening][security][readers]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  // ramfs keeps no extended attributes, so no ACL: the kernel's own file system without them.
  TempDir mnt;
  const std::string root = mnt / "root";
  REQUIRE(::mkdir(root.c_str(), 0755) == 0);
  if (::mount("ramfs", root.c_str(), "ramfs", 0, "mode=0755") != 0) {
    WARN("skipped: cannot mount a ramfs here (" << std::strerror(errno) << "): the no-ACL fallback is not tested");
    return;
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{root};
  ::chmod(mnt.path().c_str(), 0755);
  // ramfs reports no size and no free space: byte limits of their own.
  DaemonProcess d(ReadersDaemon(u, root, {"--max-use", "64M", "--keep-free", "0"}));
  REQUIRE(StartReachable(d));
  CHECK(d.WaitForLog("without POSIX ACLs"));
  const std::string a_file = EmitAs(d, u.a.id, "A's trace");
  REQUIRE(a_file.rfind(d.trace_dir() + "/", 0) == 0);
  INFO(d.log());
  CHECK(CatAs(u.a.id, a_file) == "EACCES");  // never everyone: then not even the owner
  CHECK(CatAs(u.b.id, a_file) == "EACCES");
  CHECK(CatAs(u.c.id, a_file) == "A's trace");
  CHECK(CatAsRoot(a_file) == "A's trace");
  for (const std::string& path : {d.trace_dir(), Parent(Parent(a_file)), Parent(a_file), a_file}) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    INFO(path);
    CHECK((st.st_mode & 0007) == 0);
    CHECK(st.st_gid == u.reader_gid);
  }
  // A restart warns once again, and changes nothing.
  REQUIRE(d.Stop() == 0);
  REQUIRE(StartReachable(d));
  CHECK(CatAs(u.c.id, a_file) == "A's trace");
  CHECK(CatAs(u.b.id, a_file) == "EACCES");
}

namespace {

// As `who`, a raw LIST (and a VACUUM_BY dry run keeping nothing), summed up on one line:
// per entry "seq:uid:pid:flags:path:comm:job;", then "vacuum:paths,omitted".
std::string RawListAs(const DaemonProcess& d, const Identity& who) {
  return AsUser(who, [&](int out) {
    std::string line = "error";
    auto c = RawClient::Connect(d.socket());
    if (c && c->Hello(ATR_FEATURE_FD_PASSING)) {
      std::vector<uint8_t> payload;
      proto::Encode(proto::ListRequest{0, 1024}, payload);
      auto reply = c->Call(ATR_OP_LIST, payload);
      proto::ListReply list;
      if (reply && reply->status == 0 && proto::Decode(reply->body, &list).ok()) {
        line.clear();
        for (const auto& e : list.entries) {
          line += std::to_string(e.seq) + ":" + std::to_string(e.uid) + ":" + std::to_string(e.pid) + ":" +
                  std::to_string(e.flags) + ":" + e.path + ":" + e.comm + ":" + e.labels.job + ";";
        }
      }
      proto::VacuumBy vacuum;
      vacuum.dry_run = true;
      vacuum.verbs = ATR_VACUUM_OLDER_THAN;
      vacuum.older_than_us = 1;
      payload.clear();
      proto::Encode(vacuum, payload);
      auto vreply = c->Call(ATR_OP_VACUUM_BY, payload);
      proto::VacuumByReply v;
      if (vreply && vreply->status == 0 && proto::Decode(vreply->body, &v).ok()) {
        line += "vacuum:";
        for (const auto& p : v.paths) line += p + ",";
        line += std::to_string(v.omitted);
      }
    }
    line += "\n";
    (void)!::write(out, line.data(), line.size());
  });
}

// As `who`: one schedule event through a connection that said LABELS job `job` first.
std::string EmitLabelledAs(const DaemonProcess& d, const Identity& who, const std::string& job) {
  return AsUser(who, [&](int out) {
    auto c = RawClient::Connect(d.socket());
    std::string err = "no connection";
    std::string path;
    if (c && c->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_LABELS)) {
      std::vector<uint8_t> labels;
      proto::Encode(proto::Labels{job, "3", "8"}, labels);
      auto r = c->Call(ATR_OP_LABELS, labels);
      path = r && r->status == 0 ? c->Emit(ATR_EVENT_SCHEDULE, "mine", "secret", &err) : "";
    }
    const std::string line = (path.empty() ? "error: " + err : path) + "\n";
    (void)!::write(out, line.data(), line.size());
  });
}

}  // namespace

TEST_CASE("readers: a raw LIST and a VACUUM_BY dry run tell a user nothing of another user's directories",
          "[hardening][security][readers]") {
  TestUsers u;
  if (!u.made()) {
    WARN("skipped: " << u.why_not());
    return;
  }
  DaemonProcess d(ReadersDaemon(u));
  REQUIRE(StartReachable(d));
  const std::string a_file = EmitLabelledAs(d, u.a.id, "secretjob");
  const std::string b_file = EmitLabelledAs(d, u.b.id, "bjob");
  REQUIRE(a_file.rfind(d.trace_dir() + "/", 0) == 0);
  REQUIRE(b_file.rfind(d.trace_dir() + "/", 0) == 0);
  const std::string a_uid = std::to_string(u.a.id.uid), b_uid = std::to_string(u.b.id.uid);
  const std::string a_dir = a_file.substr(d.trace_dir().size() + 1, a_file.rfind('/') - d.trace_dir().size() - 1);
  const std::string b_dir = b_file.substr(d.trace_dir().size() + 1, b_file.rfind('/') - d.trace_dir().size() - 1);

  // B: its own entry in full; A's is there (for paging) with nothing of A in it.
  const std::string b_sees = RawListAs(d, u.b.id);
  INFO("B sees " << b_sees);
  CHECK(b_sees.find("1:4294967295:0:2:hidden::;") == 0);
  CHECK(b_sees.find("2:" + b_uid + ":") != std::string::npos);
  CHECK(b_sees.find(b_dir) != std::string::npos);
  CHECK(b_sees.find(":bjob;") != std::string::npos);
  for (const std::string& secret : {":" + a_uid + ":", a_dir, std::string("secretjob")}) {
    CHECK(b_sees.find(secret) == std::string::npos);
  }
  // Its dry run names its own directory and counts A's.
  CHECK(b_sees.find("vacuum:" + b_dir + ",1") != std::string::npos);

  // C (the reader group) and root see both in full.
  for (const Identity& reader : {u.c.id, Identity{0, 0, {}}}) {
    const std::string sees = RawListAs(d, reader);
    INFO("uid " << reader.uid << " sees " << sees);
    CHECK(sees.find("1:" + a_uid + ":") == 0);
    CHECK(sees.find(":secretjob;") != std::string::npos);
    CHECK(sees.find("vacuum:" + a_dir + "," + b_dir + ",0") != std::string::npos);
  }
  // A's view mirrors B's.
  const std::string a_sees = RawListAs(d, u.a.id);
  INFO("A sees " << a_sees);
  CHECK(a_sees.find("2:4294967295:0:2:hidden::;") != std::string::npos);
  CHECK(a_sees.find("bjob") == std::string::npos);
}
