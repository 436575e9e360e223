// The library's side of protocol 1.1 against a recording daemon: registration carries one sealed
// memfd of the right size, reports and saves carry the right ids and wait flags, a destroyed
// object is released, and a restarted daemon gets every ring again, with the records
// submitted while it was away.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "atraced/proto/ring_reader.h"
#include "recording_daemon.h"
#include "support/temp_dir.h"
#include "test_env.h"

using ascend_trace_test::RecordingDaemon;
using ascend_trace_test::SocketEnv;

namespace {

// A socket path in a directory of the test process's own, removed when the process exits.
std::string TempSocket(const char* tag) {
  static atraced::testing::TempDir dir;
  static int made = 0;
  return dir / (std::string(tag) + "." + std::to_string(++made) + ".sock");
}

// The wire id the recording daemon saw for the object registered with `name` (last one).
uint32_t IdOf(RecordingDaemon& d, const std::string& name) {
  for (uint32_t id = 1; id < 100000; ++id) {
    if (const auto* r = d.Find(id); r != nullptr && r->msg.name == name) return id;
  }
  return 0;
}

std::vector<std::string> Texts(const std::vector<uint8_t>& copy) {
  std::vector<std::string> out;
  const auto snap = atraced::proto::ReadRingSnapshot(copy);  // records view into `copy`
  for (const auto& r : snap.records) out.emplace_back(r.data.begin(), r.data.end());
  return out;
}

}  // namespace

TEST_CASE("link: a create registers one sealed memfd that the daemon can read") {
  RecordingDaemon d(TempSocket("register"));
  SocketEnv env(d.path());
  TraceAttr attr{};
  attr.exitSave = true;
  const TraHandle h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "reg_obj", &attr);
  REQUIRE(h > 0);
  const uint32_t id = IdOf(d, "reg_obj");
  REQUIRE(id != 0);
  const auto* r = d.Find(id);
  CHECK(r->fds_attached == 1);
  CHECK(r->msg.msg_num == 1024);
  CHECK(r->msg.msg_size == 112);
  CHECK(r->msg.flags == ATR_RING_EXIT_SAVE);
  CHECK(r->msg.structs.empty());
  struct stat st {};
  REQUIRE(::fstat(r->memfd.get(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_size) == r->msg.ring_bytes);
  CHECK((::fcntl(r->memfd.get(), F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW));
  CHECK(d.Opcodes().front() == ATR_OP_HELLO);

  // The daemon sees submits directly, with no message.
  REQUIRE(AtraceSubmit(h, "seen by the daemon", 18) == TRACE_SUCCESS);
  CHECK(Texts(d.SnapshotRing(id)) == std::vector<std::string>{"seen by the daemon"});

  AtraceDestroy(h);
  REQUIRE(d.WaitFor(ATR_OP_RING_RELEASE, 1));
  CHECK(d.Released().back() == id);
}

TEST_CASE("link: reports and saves carry the bound ids and the wait flag") {
  RecordingDaemon d(TempSocket("report"));
  SocketEnv env(d.path());
  const TraHandle a = AtraceCreate(TRACER_TYPE_SCHEDULE, "rep_a");
  const TraHandle b = AtraceCreate(TRACER_TYPE_SCHEDULE, "rep_b");
  const TraHandle c = AtraceCreate(TRACER_TYPE_SCHEDULE, "rep_c");
  const TraEventHandle ev = AtraceEventCreate("rep_event");
  REQUIRE(AtraceEventBindTrace(ev, a) == TRACE_SUCCESS);
  REQUIRE(AtraceEventBindTrace(ev, b) == TRACE_SUCCESS);
  CHECK(AtraceEventReportSync(ev) == TRACE_SUCCESS);
  CHECK(AtraceEventReport(ev) == TRACE_SUCCESS);
  CHECK(AtraceSave(TRACER_TYPE_SCHEDULE, false) == TRACE_SUCCESS);
  CHECK(AtraceSave(TRACER_TYPE_SCHEDULE, true) == TRACE_SUCCESS);
  const auto reports = d.Reports();
  REQUIRE(reports.size() == 2);
  const std::vector<uint32_t> ids{IdOf(d, "rep_a"), IdOf(d, "rep_b")};
  CHECK(reports[0].object_ids == ids);
  CHECK(reports[0].wait);
  CHECK(reports[1].object_ids == ids);
  CHECK_FALSE(reports[1].wait);
  const auto ops = d.Opcodes();
  CHECK(std::count(ops.begin(), ops.end(), ATR_OP_RING_SAVE_ALL) == 2);
  AtraceEventDestroy(ev);
  for (TraHandle h : {a, b, c}) AtraceDestroy(h);
}

TEST_CASE("link: struct entries travel with the registration") {
  RecordingDaemon d(TempSocket("structs"));
  SocketEnv env(d.path());
  TRACE_STRUCT_DEFINE_ENTRY(en);
  TRACE_STRUCT_DEFINE_ENTRY_NAME(en, "task");
  TRACE_STRUCT_DEFINE_FIELD_UINT32(en, id, TRACE_STRUCT_SHOW_MODE_HEX);
  TRACE_STRUCT_DEFINE_ARRAY_CHAR(en, tag, 16);
  TraceAttr attr{};
  TRACE_STRUCT_SET_ATTR(en, 4, &attr);
  const TraHandle h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "bin_obj", &attr);
  TRACE_STRUCT_UNDEFINE_ENTRY(en);
  REQUIRE(h > 0);
  const auto* r = d.Find(IdOf(d, "bin_obj"));
  REQUIRE(r != nullptr);
  REQUIRE(r->msg.structs.size() == 1);
  CHECK(r->msg.structs[0].buffer_type == 4);
  CHECK(r->msg.structs[0].name == "task");
  REQUIRE(r->msg.structs[0].fields.size() == 2);
  CHECK(r->msg.structs[0].fields[0].name == "id");
  CHECK(r->msg.structs[0].fields[0].type == TRACE_STRUCT_FIELD_TYPE_UINT32);
  CHECK(r->msg.structs[0].fields[0].mode == TRACE_STRUCT_SHOW_MODE_HEX);
  CHECK(r->msg.structs[0].fields[1].length == 16);
  AtraceDestroy(h);
}

TEST_CASE("link: a restarted daemon gets every ring again, with what was submitted meanwhile") {
  const std::string path = TempSocket("restart");
  SocketEnv env(path);
  TraceAttr attr{};
  attr.exitSave = true;
  TraHandle h, gone;
  TraEventHandle ev;
  {
    RecordingDaemon first(path);
    h = AtraceCreate(TRACER_TYPE_SCHEDULE, "survivor");
    gone = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "exit_kept", &attr);
    ev = AtraceEventCreate("restart_event");
    REQUIRE(AtraceEventBindTrace(ev, h) == TRACE_SUCCESS);
    REQUIRE(AtraceSubmit(h, "before", 6) == TRACE_SUCCESS);
    AtraceDestroy(gone);  // exitSave: its ring must reach the next daemon too
  }
  // Daemon down: submit still works and costs no wait; a report fails at once.
  REQUIRE(AtraceSubmit(h, "during", 6) == TRACE_SUCCESS);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(AtraceEventReportSync(ev) == TRACE_FAILURE);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1000));

  RecordingDaemon second(path);
  REQUIRE(AtraceSubmit(h, "after", 5) == TRACE_SUCCESS);
  CHECK(AtraceEventReportSync(ev) == TRACE_SUCCESS);
  const uint32_t id = IdOf(second, "survivor");
  REQUIRE(id != 0);
  CHECK(Texts(second.SnapshotRing(id)) == std::vector<std::string>{"before", "during", "after"});
  const uint32_t kept = IdOf(second, "exit_kept");
  REQUIRE(kept != 0);
  const auto released = second.Released();  // other tests' destroyed exitSave objects come too
  CHECK(std::count(released.begin(), released.end(), kept) == 1);
  REQUIRE(second.Reports().size() == 1);
  CHECK(second.Reports()[0].object_ids == std::vector<uint32_t>{id});
  AtraceEventDestroy(ev);
  AtraceDestroy(h);
}

TEST_CASE("link: a 1.0 daemon (no memfd feature) cannot take rings and saves fail") {
  RecordingDaemon d(TempSocket("old"), /*grant_memfd=*/false);
  SocketEnv env(d.path());
  const TraHandle h = AtraceCreate(TRACER_TYPE_SCHEDULE, "old_daemon");
  REQUIRE(h > 0);
  CHECK(AtraceSave(TRACER_TYPE_SCHEDULE, true) == TRACE_FAILURE);
  const auto ops = d.Opcodes();
  CHECK(std::count(ops.begin(), ops.end(), ATR_OP_RING_REGISTER) == 0);  // never sent without the bit
  AtraceDestroy(h);
}

TEST_CASE("link: a daemon that accepts but never answers costs a bounded time, once") {
  const std::string path = TempSocket("hung");
  atraced::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener.get(), 8) == 0);  // the kernel accepts; nobody ever replies
  SocketEnv env(path);
  const auto t0 = std::chrono::steady_clock::now();
  const TraHandle h = AtraceCreate(TRACER_TYPE_SCHEDULE, "hung_obj");
  const auto t1 = std::chrono::steady_clock::now();
  CHECK(h > 0);  // the object works without the daemon
  CHECK(t1 - t0 < std::chrono::milliseconds(2500));
  CHECK(AtraceSave(TRACER_TYPE_SCHEDULE, true) == TRACE_FAILURE);
  // Backing off: no new attempt (one costs the reply timeout) within the 1 s back-off.
  CHECK(std::chrono::steady_clock::now() - t1 < std::chrono::milliseconds(800));
  CHECK(AtraceSubmit(h, "x", 1) == TRACE_SUCCESS);
  AtraceDestroy(h);
  ::unlink(path.c_str());
}
