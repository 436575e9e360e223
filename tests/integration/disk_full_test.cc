// The built daemon on a real, small file system (a 4 MiB tmpfs; root only, skipped with a
// message otherwise): at the default limits (max-use 10%, keep-free 15%) it refuses with
// -ENOSPC, stays up, keeps everything it accepted and resumes by itself when space returns.
#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "support/small_fs.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kFsBytes = 4u << 20;

struct Session {
  RawClient client;
  uint32_t next_event = 1;
};

// Opens an event with one object file (file id = event id); the status of EVENT_BEGIN.
int32_t Open(RawClient& c, uint32_t id) {
  auto begun = c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(id)));
  REQUIRE(begun);
  if (begun->status != 0) return begun->status;
  auto opened = c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(id, id, "obj" + std::to_string(id))));
  REQUIRE(opened);
  return opened->status;
}

int32_t Append(RawClient& c, uint32_t file_id, const std::string& data, std::string* message = nullptr) {
  auto r = c.Call(ATR_OP_FILE_APPEND,
                  Payload(proto::FileAppend{file_id, {reinterpret_cast<const uint8_t*>(data.data()), data.size()}}));
  REQUIRE(r);
  if (message) *message = r->message;
  return r->status;
}

uint64_t FileBytes(const std::string& dir) {
  uint64_t n = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') n += e.file_size();
  }
  return n;
}

}  // namespace

TEST_CASE("a small real file system: ENOSPC at the budget, nothing accepted lost, writes resume", "[integration][disk]") {
  if (::geteuid() != 0) {
    WARN("skipped: mounting a tmpfs needs root");
    return;
  }
  SmallFs fs(kFsBytes);
  if (!fs.mounted()) {
    WARN("skipped: mount(2) of a tmpfs was refused here (no CAP_SYS_ADMIN in this namespace)");
    return;
  }
  DaemonProcess d({{}, {}, true, 10, std::nullopt, fs.path()});
  REQUIRE(d.Start());
  auto c = RawClient::Connect(d.socket());
  REQUIRE(c);
  REQUIRE(c->Hello());

  // Two open (pinned) events take 64 KiB appends until the 10% budget (~410 KB) refuses one.
  const std::string chunk(64 << 10, 'x');
  REQUIRE(Open(*c, 1) == 0);
  REQUIRE(Open(*c, 2) == 0);
  uint64_t accepted = 0;
  std::string message;
  int32_t status = 0;
  for (int i = 0; i < 100 && status == 0; ++i) {
    status = Append(*c, 1 + i % 2, chunk, &message);
    if (status == 0) accepted += chunk.size();
  }
  CHECK(status == ATR_ENOSPC);
  CHECK(message.find("max-use") != std::string::npos);
  CHECK(accepted <= kFsBytes / 10);
  CHECK(accepted + chunk.size() > kFsBytes / 10);
  CHECK(d.WaitForLog("refusing writes (ENOSPC)"));
  // Up, and everything it accepted is on disk.
  auto status_reply = c->Call(ATR_OP_STATUS, {});
  REQUIRE(status_reply);
  CHECK(status_reply->status == 0);
  CHECK(FileBytes(d.trace_dir()) == accepted);

  // Ending the events makes them agable: the next event's write ages them and goes through.
  REQUIRE(c->Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}))->status == 0);
  REQUIRE(c->Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{2}))->status == 0);
  REQUIRE(Open(*c, 3) == 0);
  CHECK(Append(*c, 3, chunk) == 0);
  REQUIRE(c->Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{3}))->status == 0);

  // Event 1, the oldest, made the room (half of what was accepted) and is deleted in the
  // background: wait for that before measuring the disk.
  const uint64_t left = accepted / 2 + chunk.size();
  for (int i = 0; i < 100 && FileBytes(d.trace_dir()) != left; ++i) std::this_thread::sleep_for(50ms);
  REQUIRE(FileBytes(d.trace_dir()) == left);

  // Someone else fills the disk into the 15% reserve: refused within a tick (2 s)...
  const uint64_t keep_free = kFsBytes / 100 * 15;
  const uint64_t fill = fs.available() - keep_free / 2;
  {
    std::ofstream out(fs.path() + "/ballast", std::ios::binary);
    std::string block(1 << 16, 'b');
    for (uint64_t n = 0; n < fill; n += block.size()) out.write(block.data(), static_cast<std::streamsize>(std::min<uint64_t>(block.size(), fill - n)));
  }
  int32_t begun = 0;
  for (int i = 0; i < 50 && begun == 0; ++i) {
    std::this_thread::sleep_for(100ms);
    auto r = c->Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(100 + i)));
    REQUIRE(r);
    begun = r->status;
    message = r->message;
    if (begun == 0) REQUIRE(c->Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{static_cast<uint32_t>(100 + i)}))->status == 0);
  }
  CHECK(begun == ATR_ENOSPC);
  CHECK(message.find("keep-free") != std::string::npos);
  // ...and accepted again once the space is back, by itself.
  std::filesystem::remove(fs.path() + "/ballast");
  int32_t resumed = -1;
  for (int i = 0; i < 50 && resumed != 0; ++i) {
    std::this_thread::sleep_for(100ms);
    auto r = c->Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(200 + i)));
    REQUIRE(r);
    resumed = r->status;
  }
  CHECK(resumed == 0);
  CHECK(d.WaitForLog("accepting writes again"));
  CHECK(d.Stop() == 0);
}
