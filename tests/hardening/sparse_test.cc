// Sparse files through a passed descriptor, against the real binary (issue 14, defect 4).
// Before the fix, STATUS's bytes_written and `atracectl du` said 1,099,511,627,777 bytes for
// a file that takes a few KiB: the daemon took a file's length for its disk use.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


#include "support/daemon_helpers.h"
#include "support/daemon_process.h"
#include "support/raw_client.h"
#include "ctl_output.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

constexpr uint64_t kTiB = 1ull << 40;
constexpr uint64_t kApparent = kTiB + 1;   // one byte written at offset 1 TiB
constexpr uint64_t kFewKiB = 1024 * 1024;  // generous: a block or two, whatever the fs

// The one entry a LIST of this daemon holds.
proto::ListEntry OnlyEntry(RawClient& c) {
  auto r = c.Call(ATR_OP_LIST, Payload(proto::ListRequest{0, 10}));
  REQUIRE(r);
  REQUIRE(r->status == 0);
  proto::ListReply list;
  REQUIRE(proto::Decode(r->body, &list).ok());
  REQUIRE(list.entries.size() == 1);
  return list.entries[0];
}

// `atracectl du --json`'s output (the binary the user runs, not our decoder).
std::string DuJson(const DaemonProcess& d) { return CtlOutput(d, {"du", "--json"}); }

// The number after `"key":` at or after `from` in a flat JSON text (no <regex> in tests).
uint64_t JsonAfter(const std::string& json, const std::string& key, size_t from = 0) {
  const size_t at = json.find("\"" + key + "\":", from);
  REQUIRE(at != std::string::npos);
  return std::stoull(json.substr(at + key.size() + 3));
}

}  // namespace

TEST_CASE("a 1 TiB hole made through a passed descriptor counts its blocks and not its length", "[hardening][security]") {
  DaemonProcess d;
  REQUIRE(d.Start());
  uint64_t allocated = 0;
  {
    RawClient c = Connected(d);
    REQUIRE(c.Call(ATR_OP_EVENT_BEGIN, Payload(BeginRequest(1)))->status == 0);
    REQUIRE(c.Call(ATR_OP_FILE_OPEN, Payload(ObjectFileRequest(1, 1, "sparse")))->status == 0);
    REQUIRE(c.Call(ATR_OP_FILE_GET_FD, Payload(proto::IdRequest{1}))->status == 0);
    REQUIRE(c.fds().size() == 1);
    UniqueFd fd = std::move(c.fds().front());
    c.fds().pop_front();

    // What a holder can do: clear O_APPEND, grow the file to 1 TiB and write at its end.
    const int flags = ::fcntl(fd.get(), F_GETFL);
    REQUIRE(flags >= 0);
    CHECK((flags & O_APPEND) != 0);
    REQUIRE(::fcntl(fd.get(), F_SETFL, flags & ~O_APPEND) == 0);
    CHECK((::fcntl(fd.get(), F_GETFL) & O_APPEND) == 0);
    REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(kTiB)) == 0);
    REQUIRE(::pwrite(fd.get(), "x", 1, static_cast<off_t>(kTiB)) == 1);
    // What it cannot: use the descriptor to reach anything beside the file.
    CHECK(::openat(fd.get(), "..", O_RDONLY | O_CLOEXEC) == -1);
    CHECK(errno == ENOTDIR);
    struct stat st {};
    REQUIRE(::fstat(fd.get(), &st) == 0);
    allocated = static_cast<uint64_t>(st.st_blocks) * 512;
    REQUIRE(static_cast<uint64_t>(st.st_size) == kApparent);
    REQUIRE(allocated < kFewKiB);
    Measure("sparse.allocated_bytes", allocated);

    // Reported while the file is still open: STATUS, LIST and atracectl du.
    const proto::StatusReply s = QueryStatus(c);
    CHECK(s.bytes_written == allocated);
    CHECK(s.bytes_apparent == kApparent);
    const proto::ListEntry e = OnlyEntry(c);
    CHECK(e.bytes == allocated);
    CHECK(e.apparent_bytes == kApparent);
    const std::string du = DuJson(d);
    INFO(du);
    CHECK(JsonAfter(du, "total") == allocated);
    CHECK(JsonAfter(du, "total", du.find("\"apparent\"")) == kApparent);

    // At the close and after a restart (the directory measured from the disk), the same.
    fd.reset();
    REQUIRE(c.Call(ATR_OP_FILE_CLOSE, Payload(proto::IdRequest{1}))->status == 0);
    REQUIRE(c.Call(ATR_OP_EVENT_END, Payload(proto::IdRequest{1}))->status == 0);
    CHECK(QueryStatus(c).bytes_written == allocated);
  }
  REQUIRE(d.Stop() == 0);
  REQUIRE(d.Start());
  RawClient again = Connected(d);
  const proto::ListEntry recovered = OnlyEntry(again);
  CHECK(recovered.bytes > 0);  // measured from the disk by TreeBytes: a block or so again
  CHECK(recovered.bytes < kFewKiB);
  CHECK(recovered.apparent_bytes == kApparent);
}
