// Who may read the trace directory (read_grants.h), as the ACLs on disk say it: each process
// dir for the uid it was made for and the reader group, what is made in it later alike, an
// older tree made so at recovery, and the group a trace dir carries reads nothing.
// The tests of real users reading (cat, atracectl) are in tests/hardening/readers_test.cc
// and tests/ascend_trace/readers_test.cc.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "atraced/store/posix_file_system.h"
#include "atraced/store/trace_store.h"
#include "support/missing_tool.h"
#include "support/capture_log.h"
#include "support/fake_clock.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

const std::string kProcTime = "20260101000000000000";
constexpr uint32_t kOwner = 4242;  // a client's uid: no account needed, the ACL names it by number
constexpr gid_t kReaders = 4343;

// getfacl's entries (numeric, no comments), one per line; "" when getfacl fails.
std::string Acl(const std::string& path) {
  const RunResult r = Run({"getfacl", "--numeric", "--omit-header", "--absolute-names", path});
  return r.exit_code == 0 ? r.out : "";
}
bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }
// The rights an entry ("user:4242") really gives: its own, or what getfacl says the mask leaves.
std::string Effective(const std::string& acl, const std::string& entry) {
  const size_t at = acl.find("\n" + entry + ":") != std::string::npos ? acl.find("\n" + entry + ":") + 1
                    : acl.rfind(entry + ":", 0) == 0                    ? 0
                                                                        : std::string::npos;
  if (at == std::string::npos) return "";
  const std::string line = acl.substr(at, acl.find('\n', at) - at);
  const size_t eff = line.find("#effective:");
  return eff != std::string::npos ? line.substr(eff + 11, 3) : line.substr(entry.size() + 1, 3);
}

// A store over `root`, recovered; the tree a daemon with that reader group would make.
struct Daemon {
  Daemon(const std::string& root, std::optional<gid_t> readers) {
    auto opened = PosixFileSystem::Open(root, readers);
    REQUIRE(opened.ok());
    fs = std::move(*opened);
    remover = std::make_unique<InlineRemover>(*fs);
    store = std::make_unique<TraceStore>(*fs, *remover, clock, log.logger(), refusals, 10);
    REQUIRE(store->Recover().ok());
  }
  // A schedule event of `pid` for uid `uid`, with one file holding `text`; its file's path.
  std::string Write(uint32_t uid, const std::string& text, int pid = 7) {
    auto r = store->BeginEvent({{pid, pid, kProcTime}, EventKind::kSchedule, pid, "", Side::kHost, 0, uid, "prog"});
    REQUIRE(r.ok());
    auto file = store->OpenFile(r->seq, TraceFileName::Object({"schedule", "x", false}));
    REQUIRE(file.ok());
    REQUIRE((*file)->Append({reinterpret_cast<const uint8_t*>(text.data()), text.size()}).ok());
    store->EndEvent(r->seq);
    return fs->trace_dir() + "/" + r->rel_path + "/schedule_tracer_x.txt";
  }
  FakeClock clock;
  CaptureLog log;
  RefusalLog refusals;
  std::unique_ptr<PosixFileSystem> fs;
  std::unique_ptr<InlineRemover> remover;
  std::unique_ptr<TraceStore> store;
};

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The order log without its 'g' record, as a daemon from before it wrote the log.
void ForgetGrantStamp(const std::string& trace_dir) {
  const std::string log = trace_dir + "/.atraced_order";
  std::string text = ReadFile(log);
  const size_t at = text.find("\ng ");
  REQUIRE(at != std::string::npos);
  text.erase(at + 1, text.find('\n', at + 1) - at);
  WriteFile(log, text);
}

// Whether a directory's metadata changed after its entries did (read_grants.h, Unchanged).
bool MetadataChanged(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_ctim.tv_sec != st.st_mtim.tv_sec || st.st_ctim.tv_nsec != st.st_mtim.tv_nsec;
}

}  // namespace

TEST_CASE("a process dir is readable by its uid and the reader group, and so is all made in it later",
          "[store][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("getfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  TempDir tmp;
  Daemon d(tmp.path(), kReaders);
  REQUIRE(d.fs->no_acl_warning().empty());
  const std::string file = d.Write(kOwner, "mine");
  const std::string event = Parent(file), process = Parent(event);
  const std::string proc_acl = Acl(process);
  INFO(proc_acl);
  CHECK(Has(proc_acl, "user:4242:r-x"));
  CHECK(Has(proc_acl, "group:4343:r-x"));
  CHECK(Has(proc_acl, "group::---"));
  CHECK(Has(proc_acl, "other::---"));
  CHECK(Has(proc_acl, "default:user:4242:r-x"));  // what is made in it later inherits
  CHECK(Has(proc_acl, "default:group:4343:r-x"));
  CHECK(Has(Acl(event), "user:4242:r-x"));
  const std::string file_acl = Acl(file);
  INFO(file_acl);
  CHECK(Effective(file_acl, "user:4242") == "r--");
  CHECK(Effective(file_acl, "group:4343") == "r--");
  CHECK(Has(file_acl, "other::---"));
  // The trace dir lets the owner through to its own and lists for the reader group only.
  const std::string top = Acl(d.fs->trace_dir());
  INFO(top);
  CHECK(Has(top, "user:4242:--x"));
  CHECK(Has(top, "group:4343:r-x"));
  CHECK(Has(top, "group::---"));
  CHECK(Has(top, "other::---"));
  // The modes still read as before: 0750 and 0640 (the mask), nothing for others.
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("without a reader group only the uid a dir was made for is named", "[store][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("getfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  TempDir tmp;
  Daemon d(tmp.path(), std::nullopt);
  const std::string file = d.Write(kOwner, "mine");
  const std::string acl = Acl(file);
  INFO(acl);
  CHECK(Effective(acl, "user:4242") == "r--");
  CHECK(acl.find("group:4") == std::string::npos);
  CHECK(Has(acl, "group::---"));
  // The daemon's own uid needs no entry: it owns everything.
  const std::string own = Acl(d.Write(::geteuid(), "daemon's"));
  CHECK(own.find("user:" + std::to_string(::geteuid()) + ":") == std::string::npos);
}

TEST_CASE("the group a trace dir carries reads nothing below it, setgid or not", "[store][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("getfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  if (::geteuid() != 0) {
    WARN("skipped: needs root to give the trace dir another group");
    return;
  }
  TempDir tmp;
  std::filesystem::create_directories(tmp / "atrace");
  // What older packages made: 2750 root:atrace, so that everything below was group atrace.
  REQUIRE(::chown((tmp / "atrace").c_str(), ::geteuid(), 65534) == 0);
  REQUIRE(::chmod((tmp / "atrace").c_str(), 02750) == 0);
  Daemon d(tmp.path(), kReaders);
  struct stat st {};
  REQUIRE(::stat((tmp / "atrace").c_str(), &st) == 0);
  CHECK((st.st_mode & 07000) == 0);
  const std::string file = d.Write(kOwner, "mine");
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK(st.st_gid != 65534);
  CHECK(Has(Acl(file), "group::---"));
  CHECK(Has(Acl(tmp / "atrace"), "group::---"));
}

TEST_CASE("recovery makes an older daemon's tree readable by its uid only, and says so", "[store][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("getfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  if (::geteuid() != 0) {
    WARN("skipped: needs root to give the tree another group");
    return;
  }
  TempDir tmp;
  std::string file;
  {
    Daemon d(tmp.path(), kReaders);
    file = d.Write(kOwner, "mine");
  }
  // As an older daemon left it: no ACL, everything group 65534 and group-readable, and an
  // order log that vouches for no grant.
  const std::string trace_dir = tmp / "atrace";
  ForgetGrantStamp(trace_dir);
  REQUIRE(Run({"setfacl", "-R", "-b", "-k", trace_dir}).exit_code == 0);
  REQUIRE(Run({"chgrp", "-R", "65534", trace_dir}).exit_code == 0);
  REQUIRE(Run({"chmod", "-R", "g+rX", trace_dir}).exit_code == 0);
  REQUIRE(Acl(file).find("user:4242") == std::string::npos);

  Daemon again(tmp.path(), kReaders);
  CHECK(again.log.Has(LogLevel::kNotice, "1 process dir(s) had no read grant"));
  for (const std::string& path : {Parent(Parent(file)), Parent(file)}) {
    const std::string acl = Acl(path);
    INFO(path << "\n" << acl);
    CHECK(Has(acl, "user:4242:r-x"));
    CHECK(Has(acl, "group::---"));
    CHECK(Has(acl, "default:user:4242:r-x"));
  }
  const std::string acl = Acl(file);
  INFO(acl);
  CHECK(Effective(acl, "user:4242") == "r--");
  CHECK(Has(acl, "group::---"));
  CHECK(Effective(acl, "group:4343") == "r--");
  CHECK(Has(Acl(trace_dir), "user:4242:--x"));

  // A start with nothing to change changes nothing, and says nothing.
  Daemon third(tmp.path(), kReaders);
  CHECK_FALSE(third.log.Has(LogLevel::kNotice, "had no read grant"));
  CHECK(Has(Acl(trace_dir), "user:4242:--x"));

  // Another reader group: the old one reads no more.
  Daemon fourth(tmp.path(), 4444);
  CHECK(fourth.log.Has(LogLevel::kNotice, "1 process dir(s) had no read grant"));
  CHECK(Effective(Acl(file), "group:4444") == "r--");
  CHECK(Acl(file).find("group:4343") == std::string::npos);
}

TEST_CASE("a grant changed while the daemon was down is repaired at the next start, and only it",
          "[store][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("setfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  TempDir tmp;
  std::string changed_file, kept_file;
  {
    Daemon d(tmp.path(), kReaders);
    REQUIRE(d.fs->no_acl_warning().empty());
    changed_file = d.Write(kOwner, "mine", 7);
    kept_file = d.Write(kOwner, "also mine", 8);
  }
  // The order log vouches for the grants, so the next start reads no ACL of an unchanged dir.
  CHECK(ReadFile(tmp / "atrace/.atraced_order").find("\ng v1,acl,r=4343,u=" + std::to_string(::geteuid()) + "\n") !=
        std::string::npos);
  const std::string changed = Parent(Parent(changed_file)), kept = Parent(Parent(kept_file));
  // Someone removes the process dir's ACL (access and default) while the daemon is down. A
  // change within the same clock tick as the dir's last entry leaves its ctime equal to its
  // mtime (the known limit, read_grants.h): removed again until the ctime moves on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    REQUIRE(Run({"setfacl", "-b", "-k", changed}).exit_code == 0);
  } while (!MetadataChanged(changed) && std::chrono::steady_clock::now() < deadline);
  REQUIRE(MetadataChanged(changed));
  REQUIRE(Acl(changed).find("user:4242") == std::string::npos);
  REQUIRE(ReadFile(changed_file) == "mine");

  Daemon again(tmp.path(), kReaders);
  CHECK(again.log.Has(LogLevel::kNotice, "1 process dir(s) had no read grant"));
  const std::string acl = Acl(changed);
  INFO(acl);
  CHECK(Has(acl, "user:4242:r-x"));
  CHECK(Has(acl, "group:4343:r-x"));
  CHECK(Has(acl, "group::---"));
  CHECK(Has(acl, "default:user:4242:r-x"));
  CHECK(Has(Acl(kept), "user:4242:r-x"));
  CHECK(Has(Acl(tmp / "atrace"), "user:4242:--x"));  // the passage, though no dir of 4242 was read
  // Checked, the dir reads as unchanged: the start after reads and repairs nothing.
  CHECK_FALSE(MetadataChanged(changed));
  Daemon third(tmp.path(), kReaders);
  CHECK_FALSE(third.log.Has(LogLevel::kNotice, "had no read grant"));
  CHECK(Has(Acl(tmp / "atrace"), "user:4242:--x"));
}

TEST_CASE("a grant the order log vouches for under another reader group is checked in full", "[store][readers]") {
  if (const std::string missing = atraced::testing::MissingTool("getfacl", "acl"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  TempDir tmp;
  std::string file;
  {
    Daemon d(tmp.path(), kReaders);
    file = d.Write(kOwner, "mine");
  }
  REQUIRE_FALSE(MetadataChanged(Parent(Parent(file))));  // nothing says the dir changed...
  Daemon other(tmp.path(), 4444);                        // ...but the stamp does
  CHECK(other.log.Has(LogLevel::kNotice, "1 process dir(s) had no read grant"));
  CHECK(Effective(Acl(file), "group:4444") == "r--");
  CHECK(Acl(Parent(Parent(file))).find("group:4343") == std::string::npos);
  CHECK(ReadFile(tmp / "atrace/.atraced_order").find("\ng v1,acl,r=4444,") != std::string::npos);
}
