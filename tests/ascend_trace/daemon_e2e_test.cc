// libascend_trace against the real atraced binary: what an application's saves look like
// on disk, a daemon restart between two reports, and clients that lie about their rings.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "atrace_api.h"
#include "atrace_pub.h"
#include "atraced/base/cycle_counter.h"
#include "atraced/base/send_fd.h"
#include "atraced/proto/codec.h"
#include "atraced/proto/ring_positions.h"
#include "ring_writer.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/temp_dir.h"
#include "test_env.h"

using ascend_trace_test::SocketEnv;
using atraced::testing::DaemonProcess;
using atraced::testing::RawClient;
using atraced::testing::ListNames;
using atraced::testing::ReadFile;

namespace {

// Event directories of `kind` ("schedule", "exit") under the daemon's trace dir, oldest
// name first, as absolute paths.
std::vector<std::string> EventDirs(const DaemonProcess& d, const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& proc : ListNames(d.trace_dir())) {
    if (proc.rfind("trace_", 0) != 0) continue;
    for (const auto& ev : ListNames(d.trace_dir() + "/" + proc)) {
      if (ev.rfind(kind + "_event_", 0) == 0) out.push_back(d.trace_dir() + "/" + proc + "/" + ev);
    }
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

// CANN's line time, "YYYY-MM-DD hh:mm:ss.mmm.uuu " (with its trailing space): 'd' a digit.
// (No <regex>: g++ 12 with ASan warns falsely inside it, and warnings are errors.)
constexpr std::string_view kLineTime = "dddd-dd-dd dd:dd:dd.ddd.ddd ";

bool HasLineTime(const std::string& line) {
  if (line.size() < kLineTime.size()) return false;
  for (size_t i = 0; i < kLineTime.size(); ++i) {
    const char want = kLineTime[i];
    if (want == 'd' ? (line[i] < '0' || line[i] > '9') : line[i] != want) return false;
  }
  return true;
}

// The record texts of a ring save's .txt, checking CANN's line format on the way; its last
// line says where each record sits in the ring (proto/ring_positions.h), one per record.
std::vector<std::string> Records(const std::string& path) {
  std::vector<std::string> out;
  std::vector<std::string> lines = Lines(ReadFile(path));
  REQUIRE(!lines.empty());
  const auto positions = atraced::proto::FindRingPositions(lines.back() + "\n");
  INFO(lines.back());
  REQUIRE(positions);
  lines.pop_back();
  CHECK(positions->records.size() == lines.size());
  for (const auto& line : lines) {
    INFO(line);
    REQUIRE(HasLineTime(line));
    out.push_back(line.substr(kLineTime.size()));
  }
  return out;
}

TraStatus Submit(TraHandle h, const std::string& text) {
  return AtraceSubmit(h, text.data(), static_cast<uint32_t>(text.size()));
}

}  // namespace

TEST_CASE("e2e: a synchronous report lands in CANN's layout, .txt lines and .bin header") {
  DaemonProcess d;
  REQUIRE(d.Start());
  SocketEnv env(d.socket());
  TraceAttr text_attr{};
  const TraHandle text = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "e2e_txt", &text_attr);
  TraceStructEntry* entry = AtraceStructEntryCreate("e2e_struct");
  REQUIRE(entry != nullptr);
  AtraceStructItemFieldSet(entry, "value", TRACE_STRUCT_FIELD_TYPE_UINT32, TRACE_STRUCT_SHOW_MODE_DEC, 4);
  TraceAttr bin_attr{};
  AtraceStructSetAttr(entry, 0, &bin_attr);
  const TraHandle bin = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "e2e_bin", &bin_attr);
  REQUIRE(text > 0);
  REQUIRE(bin > 0);
  const TraEventHandle ev = AtraceEventCreate("e2e_event");
  REQUIRE(ev > 0);
  REQUIRE(AtraceEventBindTrace(ev, text) == TRACE_SUCCESS);
  REQUIRE(AtraceEventBindTrace(ev, bin) == TRACE_SUCCESS);
  for (int i = 0; i < 3; ++i) REQUIRE(Submit(text, "CqReport:devId=0,stmId=" + std::to_string(i)) == TRACE_SUCCESS);
  for (uint32_t v : {7u, 8u}) REQUIRE(AtraceSubmitByType(bin, 0, &v, sizeof v) == TRACE_SUCCESS);

  REQUIRE(AtraceEventReportSync(ev) == TRACE_SUCCESS);
  // Synchronous: the files are there when the call returns, in one schedule dir of our pid.
  auto dirs = EventDirs(d, "schedule");
  REQUIRE(dirs.size() == 1);
  CHECK(dirs[0].find("/schedule_event_" + std::to_string(::getpid()) + "_") != std::string::npos);
  CHECK(ListNames(dirs[0]) == std::vector<std::string>{"schedule_tracer_e2e_bin.bin", "schedule_tracer_e2e_txt.txt"});
  CHECK(Records(dirs[0] + "/schedule_tracer_e2e_txt.txt") ==
        std::vector<std::string>{"CqReport:devId=0,stmId=0", "CqReport:devId=0,stmId=1", "CqReport:devId=0,stmId=2"});
  const std::string bytes = ReadFile(dirs[0] + "/schedule_tracer_e2e_bin.bin");
  REQUIRE(bytes.size() > 48);
  uint32_t magic = 0, version = 0;  // TraceCtrlHead starts with two u32 (ring_format.cc)
  std::memcpy(&magic, bytes.data(), 4);
  std::memcpy(&version, bytes.data() + 4, 4);
  CHECK(magic == 0xD928);   // CANN's TRACE_MAGIC
  CHECK(version == 0x0003);  // TRACE_VERSION
  CHECK(bytes.find("e2e_struct") != std::string::npos);
  CHECK(bytes.find("value") != std::string::npos);
  const auto positions = atraced::proto::FindRingPositions(bytes);  // after the data segment
  REQUIRE(positions);
  CHECK(positions->records == std::vector<uint64_t>{0, 1});

  AtraceEventDestroy(ev);
  AtraceDestroy(text);
  AtraceDestroy(bin);
  AtraceStructEntryDestroy(entry);
}

TEST_CASE("e2e: records submitted while the daemon was away are in the next report") {
  DaemonProcess d;
  REQUIRE(d.Start());
  SocketEnv env(d.socket());
  TraceAttr attr{};
  const TraHandle h = AtraceCreateWithAttr(TRACER_TYPE_SCHEDULE, "e2e_restart", &attr);
  const TraEventHandle ev = AtraceEventCreate("e2e_restart_ev");
  REQUIRE(h > 0);
  REQUIRE(ev > 0);
  REQUIRE(AtraceEventBindTrace(ev, h) == TRACE_SUCCESS);
  REQUIRE(Submit(h, "before the restart") == TRACE_SUCCESS);
  REQUIRE(AtraceEventReportSync(ev) == TRACE_SUCCESS);
  REQUIRE(EventDirs(d, "schedule").size() == 1);

  REQUIRE(d.Stop() == 0);
  // Submit never touches the socket: it works while no daemon runs.
  REQUIRE(Submit(h, "while the daemon was away") == TRACE_SUCCESS);
  CHECK(AtraceEventReportSync(ev) == TRACE_FAILURE);  // bounded, and says so

  REQUIRE(d.Start());  // same root, same socket
  REQUIRE(AtraceEventReportSync(ev) == TRACE_SUCCESS);
  auto dirs = EventDirs(d, "schedule");
  REQUIRE(dirs.size() == 2);
  // The ring was never lost: the new report holds both records.
  const std::string newest = dirs[0] < dirs[1] ? dirs[1] : dirs[0];
  CHECK(Records(newest + "/schedule_tracer_e2e_restart.txt") ==
        std::vector<std::string>{"before the restart", "while the daemon was away"});
  AtraceEventDestroy(ev);
  AtraceDestroy(h);
}

// ---- Clients that lie: a raw 1.1 connection registering rings by hand -----------------

namespace {

// A connection that negotiated ATR_FEATURE_MEMFD.
RawClient MemfdClient(const DaemonProcess& d) {
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD));
  return std::move(*c);
}

// Sends RING_REGISTER for object `id` with `fd` attached (or none if fd < 0); returns the reply.
atraced::testing::RawReply Register(RawClient& c, uint32_t id, int fd, uint32_t ring_bytes, uint32_t msg_num = 4,
                                    uint32_t msg_size = 64, uint8_t flags = 0) {
  atraced::proto::RingRegister m;
  m.object_id = id;
  m.flags = flags;
  m.msg_num = msg_num;
  m.msg_size = msg_size;
  m.ring_bytes = ring_bytes;
  m.name = "lie" + std::to_string(id);
  std::vector<uint8_t> payload;
  atraced::proto::Encode(m, payload);
  std::vector<uint8_t> frame;
  atraced::proto::AppendFrame(frame, ATR_OP_RING_REGISTER, 0, 1000 + id, payload);
  REQUIRE(atraced::SendWithFd(c.fd(), frame.data(), frame.size(), fd, MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size()));
  auto r = c.Read();
  REQUIRE(r);
  return *r;
}

}  // namespace

TEST_CASE("e2e: a ring whose slots are rewritten with garbage gives what is valid and the daemon stays up") {
  DaemonProcess d;
  REQUIRE(d.Start());
  RawClient c = MemfdClient(d);
  ascend_trace::RingShape shape{4, 64, false, false};
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t len = (shape.bytes() + page - 1) / page * page;
  void* at = ::mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(at != MAP_FAILED);
  atraced::UniqueFd fd;
  uint64_t mapped = 0;
  REQUIRE(ascend_trace::CreateRing(shape, "hostile", at, &fd, &mapped) == 0);
  auto* base = static_cast<uint8_t*>(at);
  for (const char* text : {"good one", "good two", "good three"}) {
    REQUIRE(ascend_trace::WriteRecord(base, shape.msg_num - 1, shape.msg_size, false, false, /*claim_key=*/0, 0, text,
                                      static_cast<uint32_t>(std::strlen(text))) == TRACE_SUCCESS);
  }
  REQUIRE(Register(c, 1, fd.get(), static_cast<uint32_t>(mapped)).status == 0);
  // Now the client turns hostile: slot 1 claims a huge length, slot 2 is pure garbage.
  const uint32_t slot = ATR_RING_SLOT_SIZE(shape.msg_size);
  uint8_t* slot1 = base + ATR_RING_HEADER_SIZE + slot;
  const uint32_t huge = 0x7fffffff;
  std::memcpy(slot1 + 16, &huge, sizeof huge);
  std::memset(base + ATR_RING_HEADER_SIZE + 2 * slot, 0xA5, slot);

  atraced::proto::RingReport report;
  report.wait = true;
  report.object_ids = {1};
  auto r = c.Call(ATR_OP_RING_REPORT, atraced::testing::Payload(report));
  REQUIRE(r);
  CHECK(r->status == 0);
  auto dirs = EventDirs(d, "schedule");
  REQUIRE(dirs.size() == 1);
  const std::string saved = ReadFile(dirs[0] + "/schedule_tracer_lie1.txt");
  CHECK(saved.find("good one") != std::string::npos);
  CHECK(saved.find("good two") == std::string::npos);    // its head lies: refused
  CHECK(saved.find("good three") == std::string::npos);  // overwritten with garbage
  CHECK(saved.find("record(s) lost") != std::string::npos);
  CHECK(d.WaitForLog("ring lie1 of pid"));
  // Still serving.
  CHECK(c.Call(ATR_OP_STATUS, {})->status == 0);
  ::munmap(at, len);
}

TEST_CASE("e2e: memfds that are too small, not memfds, or not sealed are refused") {
  DaemonProcess d;
  REQUIRE(d.Start());
  RawClient c = MemfdClient(d);
  const uint32_t need = static_cast<uint32_t>(ATR_RING_BYTES(4, 64));

  SECTION("no descriptor at all") {
    auto r = Register(c, 1, -1, need);
    CHECK(r.status == ATR_EBADF);
  }
  SECTION("a memfd smaller than the ring it claims") {
    atraced::UniqueFd fd(::memfd_create("small", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    REQUIRE(::ftruncate(fd.get(), 64) == 0);
    REQUIRE(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK) == 0);
    auto r = Register(c, 2, fd.get(), need);
    CHECK(r.status == ATR_EINVAL);
    CHECK(r.message.find("holds 64 bytes") != std::string::npos);
  }
  SECTION("a regular file instead of a memfd") {
    atraced::testing::TempDir tmp;
    atraced::UniqueFd fd(::open((tmp / "f").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    REQUIRE(::ftruncate(fd.get(), need) == 0);
    auto r = Register(c, 3, fd.get(), need);
    CHECK(r.status == ATR_EINVAL);
    CHECK(r.message.find("not a memfd") != std::string::npos);
  }
  SECTION("a memfd that could still shrink under the daemon's mapping") {
    atraced::UniqueFd fd(::memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    REQUIRE(::ftruncate(fd.get(), need) == 0);
    auto r = Register(c, 4, fd.get(), need);
    CHECK(r.status == ATR_EINVAL);
    CHECK(r.message.find("F_SEAL_SHRINK") != std::string::npos);
  }
  SECTION("a sealed memfd whose header is not a ring") {
    atraced::UniqueFd fd(::memfd_create("zeros", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    REQUIRE(::ftruncate(fd.get(), need) == 0);
    REQUIRE(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK) == 0);
    auto r = Register(c, 5, fd.get(), need);
    CHECK(r.status == ATR_EINVAL);
    // "ring NAME: ring header: bad magic 0...": the reason said once (issue 21: it was twice).
    const size_t at = r.message.find(": ring header: bad magic 0");
    CHECK(r.message.rfind("ring ", 0) == 0);
    CHECK(at != std::string::npos);
    CHECK(r.message.find("bad magic", at + 20) == std::string::npos);
  }
  // Whatever was refused, the connection and the daemon go on.
  CHECK(c.Call(ATR_OP_STATUS, {})->status == 0);
  CHECK(d.WaitForLog("refused"));
}

TEST_CASE("e2e: a counter-stamped ring is held only where ATR_FEATURE_RING_COUNTER was granted") {
  DaemonProcess d;
  REQUIRE(d.Start());
  const bool counter_here = atraced::CounterInstructionRuns(nullptr) && atraced::CpuSaysCounterInvariant();
  ascend_trace::RingShape shape{4, 64, false, true};
  void* at = ::mmap(nullptr, ATR_RING_MAX_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(at != MAP_FAILED);
  atraced::UniqueFd fd;
  uint64_t mapped = 0;
  REQUIRE(ascend_trace::CreateRing(shape, "counted", at, &fd, &mapped) == 0);
  const auto bytes = static_cast<uint32_t>(mapped);

  // A 1.1 client that did not ask: the flag is refused, and a registration that hides it
  // is refused by the header check.
  RawClient old_client = MemfdClient(d);
  CHECK(Register(old_client, 1, fd.get(), bytes, 4, 64, ATR_RING_COUNTER).status == ATR_ENOTSUP);
  CHECK(Register(old_client, 2, fd.get(), bytes).status == ATR_EINVAL);
  CHECK(d.LogHas("ATR_RING_COUNTER needs ATR_FEATURE_RING_COUNTER"));

  // Without MEMFD the feature is never granted; with it, where the daemon reads the counter.
  auto plain = RawClient::Connect(d.socket());
  REQUIRE(plain);
  uint64_t granted = 0;
  REQUIRE(plain->Hello(ATR_FEATURE_FD_PASSING | ATR_FEATURE_RING_COUNTER, &granted));
  CHECK((granted & ATR_FEATURE_RING_COUNTER) == 0);
  auto asked = RawClient::Connect(d.socket());
  REQUIRE(asked);
  REQUIRE(asked->Hello(ATR_FEATURE_MEMFD | ATR_FEATURE_RING_COUNTER, &granted));
  CHECK(((granted & ATR_FEATURE_RING_COUNTER) != 0) == counter_here);
  if (counter_here) {
    CHECK(Register(*asked, 3, fd.get(), bytes, 4, 64, ATR_RING_COUNTER).status == 0);
    CHECK(Register(*asked, 4, fd.get(), bytes).status == ATR_EINVAL);  // the header says counter
  }
  ::munmap(at, ATR_RING_MAX_BYTES);
}
