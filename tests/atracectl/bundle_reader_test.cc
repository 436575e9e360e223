// The bundle reader (client/atracectl/files/bundle_reader.h) and bundle.jsonl's lines
// (files/bundle_meta.h), driven directly: tar streams made in memory, every refusal checked.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "client/fleet_bundles.h"
#include "files/bundle_meta.h"
#include "files/bundle_reader.h"

using namespace atracectl;
using fleet_test::TarMember;

namespace {

const std::string kDir = "trace_7_7_20261206060000000000/schedule_event_7_20261206061000000000";
const std::string kMeta = "{\"record\":\"host\",\"format\":1,\"host\":\"n1\",\"utc_offset_s\":3600}\n"
                          "{\"record\":\"dir\",\"path\":\"" + kDir + "\",\"pid\":7,\"comm\":\"train\",\"kind\":\"schedule\","
                          "\"side\":\"host\",\"device_id\":0,\"created_unix_us\":5,\"job\":\"J1\",\"rank\":3,\"world_size\":8,"
                          "\"uid\":1000,\"seq\":42}\n";

struct Seen {
  std::vector<BundleDir> dirs;
  std::vector<std::pair<BundleDir, std::string>> files;  // (dir, name)
  std::vector<std::string> bytes;
};

// Reads `tar` (without its end blocks unless `end`) as ReadBundle would after gzip.
BundleRead Read(const std::string& tar, Seen* seen, bool end = true, bool meta_only = false) {
  const std::string stream = end ? tar + std::string(1024, '\0') : tar;
  size_t at = 0;
  BundleVisitor v;
  v.meta_only = meta_only;
  v.dir = [seen](const BundleDir& d) { seen->dirs.push_back(d); };
  v.file = [seen](const BundleDir& d, const std::string& name, std::string&& bytes) {
    seen->files.push_back({d, name});
    seen->bytes.push_back(std::move(bytes));
  };
  return ReadTarStream(
      [&](char* buf, size_t n) -> long {
        const size_t take = std::min(n, stream.size() - at);
        std::memcpy(buf, stream.data() + at, take);
        at += take;
        return static_cast<long>(take);
      },
      v);
}

}  // namespace

TEST_CASE("bundle reader: bundle.jsonl first describes each directory, its files come with that description",
          "[atracectl][bundle]") {
  Seen seen;
  const BundleRead r = Read(TarMember("bundle.jsonl", kMeta) + TarMember("atrace/" + kDir + "/schedule_tracer_X.txt", "x\n"),
                            &seen);
  REQUIRE(r.status.ok());
  CHECK(r.has_host);
  CHECK(r.host.host == "n1");
  CHECK(r.host.utc_offset_s == 3600);
  REQUIRE(seen.dirs.size() == 1);
  REQUIRE(seen.files.size() == 1);
  const BundleDir& d = seen.files[0].first;
  CHECK(d.path == kDir);
  CHECK(d.pid == 7);
  CHECK(d.job == "J1");
  CHECK(d.rank == 3);
  CHECK(d.world_size == 8);
  CHECK(d.uid == 1000u);
  CHECK(d.seq == 42u);
  CHECK(seen.files[0].second == "schedule_tracer_X.txt");  // (ustar names stop at 100 bytes)
  CHECK(seen.bytes[0] == "x\n");
  CHECK(r.files == 1);
}

TEST_CASE("bundle reader: meta_only stops after bundle.jsonl", "[atracectl][bundle]") {
  Seen seen;
  const BundleRead r = Read(TarMember("bundle.jsonl", kMeta) + TarMember("atrace/" + kDir + "/a.txt", "x\n"), &seen,
                            /*end=*/false, /*meta_only=*/true);
  CHECK(r.status.ok());
  CHECK(seen.dirs.size() == 1);
  CHECK(seen.files.empty());
}

TEST_CASE("bundle reader: a directory bundle.jsonl does not describe is described from its name, unlabelled",
          "[atracectl][bundle]") {
  Seen seen;
  const BundleRead r = Read(TarMember("atrace/" + kDir + "/schedule_tracer_o.txt", "y\n"), &seen);
  REQUIRE(r.status.ok());
  REQUIRE(seen.files.size() == 1);
  CHECK(seen.files[0].first.pid == 7);
  CHECK(seen.files[0].first.kind == "schedule");
  CHECK_FALSE(seen.files[0].first.rank.has_value());
  CHECK_FALSE(seen.files[0].first.uid.has_value());
}

TEST_CASE("bundle reader: '..', absolute, linked and stray members are refused or skipped and named, never handed out",
          "[atracectl][bundle][security]") {
  Seen seen;
  const BundleRead r = Read(TarMember("atrace/../etc/passwd", "root\n") + TarMember("/etc/shadow", "x") +
                                TarMember("atrace/" + kDir + "/link", "", '2') + TarMember("atrace/loose.txt", "z") +
                                TarMember("atrace/" + kDir + "/ok.txt", "ok\n"),
                            &seen);
  REQUIRE(r.status.ok());
  REQUIRE(seen.files.size() == 1);
  CHECK(seen.files[0].second == "ok.txt");
  REQUIRE(r.problems.size() == 3);
  CHECK(r.problems[0] == "member atrace/../etc/passwd refused: an absolute name or a '..' component");
  CHECK(r.problems[1] == "member /etc/shadow refused: an absolute name or a '..' component");
  CHECK(r.problems[2] == "member atrace/" + kDir + "/link skipped: not a regular file");
}

TEST_CASE("bundle reader: a cut or corrupt stream is an error saying so, what came before it kept",
          "[atracectl][bundle]") {
  const std::string whole = TarMember("atrace/" + kDir + "/a.txt", "first\n") + TarMember("atrace/" + kDir + "/b.txt", "second\n");
  Seen cut;
  const BundleRead r = Read(whole.substr(0, 512 + 512 + 100), &cut, /*end=*/false);
  CHECK_FALSE(r.status.ok());
  CHECK(r.status.message() == "the tar stream ends inside a header: truncated");
  CHECK(cut.files.size() == 1);  // a.txt was read whole before the cut
  std::string bad = whole;
  bad[148] ^= 1;  // the first header's checksum
  Seen corrupt;
  const BundleRead c = Read(bad, &corrupt);
  CHECK_FALSE(c.status.ok());
  CHECK(c.status.message() == "a tar header's checksum is wrong: not a tar stream, or corrupt");
  CHECK(corrupt.files.empty());
  Seen big;
  const BundleRead b = Read(TarMember("atrace/" + kDir + "/huge.txt", "", '0', 1ull << 40), &big, /*end=*/false);
  CHECK_FALSE(b.status.ok());
  CHECK(b.status.message().find("more than the 64 MiB a trace file may") != std::string::npos);
}

TEST_CASE("bundle.jsonl: a dir line's fields are checked, a bad one dropped, the line kept", "[atracectl][bundle]") {
  const BundleMetaLine ok = ParseBundleMetaLine(
      "{\"record\":\"dir\",\"path\":\"" + kDir + "\",\"pid\":7,\"uid\":0,\"seq\":1,\"rank\":0}");
  CHECK(ok.record == "dir");
  CHECK(ok.dir.uid == 0u);
  CHECK(ok.dir.seq == 1u);
  CHECK(ok.dir.rank == 0);
  const BundleMetaLine bad = ParseBundleMetaLine(
      "{\"record\":\"dir\",\"path\":\"" + kDir + "\",\"pid\":7,\"uid\":-1,\"seq\":\"9\",\"rank\":\"x\",\"job\":\"a b\"}");
  CHECK(bad.record == "dir");
  CHECK_FALSE(bad.dir.uid.has_value());
  CHECK(bad.dir.seq == 0u);
  CHECK_FALSE(bad.dir.rank.has_value());
  CHECK(bad.dir.job.empty());
  CHECK(ParseBundleMetaLine("{\"record\":\"dir\",\"path\":\"" + kDir + "\"}").record.empty());  // no pid
  CHECK(ParseBundleMetaLine("not json").record.empty());
  BundleDir d;
  CHECK(DirFromPath(kDir, &d));
  CHECK(d.pid == 7);
  CHECK_FALSE(DirFromPath("trace_7_7_x/other_dir", &d));
  CHECK_FALSE(DirFromPath(kDir + "/deeper", &d));
}

TEST_CASE("bundle.jsonl: an aged line round-trips from the daemon's entry, and one with a field that fails its check is "
          "no line",
          "[atracectl][bundle][aged]") {
  atrace::Client::AgedEntry e{1765079400000000, 1000, ATRACE_AGED_KEEP_FREE, ATRACE_AGED_HANG, kDir, "J1", "3", "8"};
  const std::string line = BundleAgedLine(e);
  CHECK(line == "{\"record\":\"aged\",\"dir\":\"" + kDir + "\",\"job\":\"J1\",\"rank\":3,\"world_size\":8,\"uid\":1000,"
                "\"reason\":\"keep-free\",\"at\":1765079400000000,\"exported\":false,\"by\":\"hang\"}\n");
  const BundleMetaLine read = ParseBundleMetaLine(line.substr(0, line.size() - 1));
  REQUIRE(read.record == "aged");
  CHECK(read.aged.dir == kDir);
  CHECK(read.aged.job == "J1");
  CHECK(read.aged.rank == 3);
  CHECK(read.aged.world_size == 8);
  CHECK(read.aged.uid == 1000u);
  CHECK(read.aged.reason == "keep-free");
  CHECK(read.aged.at_us == 1765079400000000);
  CHECK_FALSE(read.aged.exported);
  CHECK(read.aged.hang);
  // No rank to name, or a reason the daemon does not have: nothing is written.
  e.rank = "";
  CHECK(BundleAgedLine(e).empty());
  e.rank = "3";
  e.reason = 9;
  CHECK(BundleAgedLine(e).empty());
  // Edited lines: each failing field makes it no line.
  for (const std::string bad : {
           "{\"record\":\"aged\",\"job\":\"J1\",\"rank\":3,\"reason\":\"bytes\"}",                       // no time
           "{\"record\":\"aged\",\"job\":\"J1\",\"rank\":3,\"reason\":\"disk\",\"at\":1}",               // no reason of ours
           "{\"record\":\"aged\",\"job\":\"J 1\",\"rank\":3,\"reason\":\"bytes\",\"at\":1}",             // not a job label
           "{\"record\":\"aged\",\"rank\":3,\"reason\":\"bytes\",\"at\":1}",                           // no job
           "{\"record\":\"aged\",\"job\":\"J1\",\"rank\":\"3\",\"reason\":\"bytes\",\"at\":1}",          // a string rank
           "{\"record\":\"aged\",\"job\":\"J1\",\"rank\":-3,\"reason\":\"bytes\",\"at\":1}",             // not a rank
           "{\"record\":\"aged\",\"job\":\"J1\",\"rank\":3,\"reason\":\"bytes\",\"at\":-1}"}) {          // before the epoch
    CAPTURE(bad);
    CHECK(ParseBundleMetaLine(bad).record.empty());
  }
}
