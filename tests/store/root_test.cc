// Root resolution: explicit root, then ASCEND_WORK_PATH (soft), then the configuration
// file, then $HOME/ascend; components created 0750; 3716-byte limit; realpath.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "atraced/store/posix_file_system.h"
#include "atraced/store/root.h"
#include "support/capture_log.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;

namespace {
struct ScopedCwd {
  explicit ScopedCwd(const std::string& dir) {
    char buf[4096];
    old = ::getcwd(buf, sizeof buf);
    REQUIRE(::chdir(dir.c_str()) == 0);
  }
  ~ScopedCwd() { (void)::chdir(old.c_str()); }
  std::string old;
};

// A path of exactly `len` bytes under `base`, built from components of at most 200 bytes.
std::string PathOfLength(const std::string& base, size_t len) {
  std::string p = base;
  while (p.size() < len) {
    size_t room = len - p.size() - 1;  // minus the '/'
    if (room == 0) {                   // cannot end on a bare '/': lengthen the last part
      p += "x";
      break;
    }
    size_t part = std::min<size_t>(room > 201 ? 200 : room, 200);
    p += "/" + std::string(part, 'd');
  }
  return p;
}
}  // namespace

TEST_CASE("an explicit root wins and its missing components are created 0750", "[root]") {
  TempDir tmp;
  CaptureLog log;
  RootSources s{tmp / "a/b/c", tmp / "env", std::nullopt, tmp.path()};
  auto r = ResolveRoot(s, log.logger());
  REQUIRE(r.ok());
  CHECK(r->path == tmp / "a/b/c");
  CHECK(r->source == "--root");
  CHECK(Mode(tmp / "a") == 0750);
  CHECK(Mode(tmp / "a/b/c") == 0750);
  CHECK_FALSE(Exists(tmp / "env"));
}

TEST_CASE("an unusable explicit root is an error, not a fallback", "[root]") {
  TempDir tmp;
  WriteFile(tmp / "file", "x");
  CaptureLog log;
  RootSources s{tmp / "file/sub", tmp / "env", std::nullopt, tmp.path()};
  auto r = ResolveRoot(s, log.logger());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find(tmp / "file/sub") != std::string::npos);
  CHECK_FALSE(Exists(tmp / "env"));
  CHECK_FALSE(Exists(tmp / "ascend"));
}

TEST_CASE("ASCEND_WORK_PATH absolute, relative and with ..", "[root]") {
  TempDir tmp;
  CaptureLog log;
  SECTION("absolute") {
    auto r = ResolveRoot({std::nullopt, tmp / "work", std::nullopt, tmp / "home"}, log.logger());
    REQUIRE(r.ok());
    CHECK(r->path == tmp / "work");
    CHECK(r->source == "ASCEND_WORK_PATH");
  }
  SECTION("relative to the working directory") {
    ScopedCwd cwd(tmp.path());
    auto r = ResolveRoot({std::nullopt, std::string("./dir"), std::nullopt, tmp / "home"}, log.logger());
    REQUIRE(r.ok());
    CHECK(r->path == tmp / "dir");
  }
  SECTION("parent/../target is normalised by realpath") {
    ScopedCwd cwd(tmp.path());
    auto r = ResolveRoot({std::nullopt, std::string("parent/../target"), std::nullopt, tmp / "home"}, log.logger());
    REQUIRE(r.ok());
    CHECK(r->path == tmp / "target");
  }
  SECTION("a symlinked root resolves to its target") {
    REQUIRE(::mkdir((tmp / "real").c_str(), 0750) == 0);
    REQUIRE(::symlink((tmp / "real").c_str(), (tmp / "link").c_str()) == 0);
    auto r = ResolveRoot({std::nullopt, tmp / "link", std::nullopt, tmp / "home"}, log.logger());
    REQUIRE(r.ok());
    CHECK(r->path == tmp / "real");
  }
  CHECK_FALSE(Exists(tmp / "home/ascend"));
}

TEST_CASE("a bad ASCEND_WORK_PATH warns with the reason and falls back", "[root]") {
  TempDir tmp;
  WriteFile(tmp / "file", "x");
  CaptureLog log;
  std::string bad;
  std::string reason;
  SECTION("empty") {
    bad = "";
    reason = "path is empty";
  }
  SECTION("under a regular file") {
    bad = tmp / "file/sub";
    reason = "is not a directory";
  }
  SECTION("one byte over 3716") {
    bad = PathOfLength(tmp.path(), kMaxRootPathLength + 1);
    reason = "longer than the limit of 3716";
  }
  auto r = ResolveRoot({std::nullopt, bad, std::nullopt, tmp / "home"}, log.logger());
  REQUIRE(r.ok());
  CHECK(r->path == tmp / "home/ascend");
  CHECK(r->source == "HOME");
  CHECK(Mode(tmp / "home/ascend") == 0750);
  CHECK(log.Has(LogLevel::kWarning, "ASCEND_WORK_PATH [" + bad + "] is unusable"));
  CHECK(log.Has(LogLevel::kWarning, reason));
}

TEST_CASE("a root of exactly 3716 bytes is accepted and created", "[root]") {
  TempDir tmp;
  CaptureLog log;
  std::string path = PathOfLength(tmp.path(), kMaxRootPathLength);
  REQUIRE(path.size() == kMaxRootPathLength);
  auto r = ResolveRoot({std::nullopt, path, std::nullopt, tmp / "home"}, log.logger());
  REQUIRE(r.ok());
  CHECK(r->path == path);
  CHECK(IsDir(path));
}

TEST_CASE("the configuration file's root comes after the environment and before HOME", "[root]") {
  TempDir tmp;
  CaptureLog log;
  auto r = ResolveRoot({std::nullopt, std::nullopt, tmp / "conf", tmp / "home"}, log.logger());
  REQUIRE(r.ok());
  CHECK(r->path == tmp / "conf");
  CHECK(r->source == "config");
  auto env_first = ResolveRoot({std::nullopt, tmp / "env", tmp / "conf", tmp / "home"}, log.logger());
  REQUIRE(env_first.ok());
  CHECK(env_first->path == tmp / "env");
  WriteFile(tmp / "file", "x");
  auto bad_conf = ResolveRoot({std::nullopt, std::nullopt, tmp / "file/x", tmp / "home"}, log.logger());
  CHECK_FALSE(bad_conf.ok());
  CHECK_FALSE(Exists(tmp / "home"));
}

TEST_CASE("the trace dir is ROOT/atrace without a doubled slash", "[root]") {
  CHECK(atraced::PosixFileSystem::TraceDirFor("/") == "/atrace");
  CHECK(atraced::PosixFileSystem::TraceDirFor("//") == "/atrace");
  CHECK(atraced::PosixFileSystem::TraceDirFor("/var/log/ascend") == "/var/log/ascend/atrace");
  CHECK(atraced::PosixFileSystem::TraceDirFor("/var/log/ascend//") == "/var/log/ascend/atrace");
}
