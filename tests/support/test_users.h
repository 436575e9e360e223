// Real users for the tests of who reads what (issue 39): A and B in the socket's group, C in
// the reader group and the socket's (an administrator who uses atracectl), made with useradd for one test and removed after it. Needs root; made()
// is false (and says why, once) where users cannot be made.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <sys/stat.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/daemon_process.h"
#include "support/subprocess.h"

namespace atraced::testing {

class TestUsers {
 public:
  struct User {
    std::string name;
    Identity id;
  };

  TestUsers() {
    if (::geteuid() != 0) {
      why_ = "needs root to make users A, B and C";
      return;
    }
    // Names no one else uses: this process's pid (tests of two trees may run at once).
    const std::string tag = std::to_string(::getpid());
    socket_group_ = "atrs" + tag;
    reader_group_ = "atrr" + tag;
    if (!Tool({"groupadd", socket_group_}) || !Tool({"groupadd", reader_group_})) return;
    groups_made_ = true;
    for (const char* who : {"a", "b", "c"}) {
      const std::string name = "atr" + std::string(who) + tag;
      const std::string extra = *who == 'c' ? reader_group_ + "," + socket_group_ : socket_group_;
      if (!Tool({"useradd", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", "--groups", extra, name})) {
        return;
      }
      made_.push_back(name);
      const struct passwd* pw = ::getpwnam(name.c_str());
      if (pw == nullptr) {
        why_ = "useradd made " + name + " but getpwnam does not find it";
        return;
      }
      User u{name, {pw->pw_uid, pw->pw_gid, {pw->pw_gid, Gid(socket_group_)}}};
      if (*who == 'c') u.id.groups.push_back(Gid(reader_group_));
      (*who == 'a' ? a : *who == 'b' ? b : c) = u;
    }
    socket_gid = Gid(socket_group_);
    reader_gid = Gid(reader_group_);
    ok_ = true;
  }
  ~TestUsers() {
    for (const std::string& name : made_) Tool({"userdel", name});
    if (groups_made_) {
      Tool({"groupdel", socket_group_});
      Tool({"groupdel", reader_group_});
    }
  }
  TestUsers(const TestUsers&) = delete;
  TestUsers& operator=(const TestUsers&) = delete;

  bool made() const { return ok_; }
  const std::string& why_not() const { return why_; }
  const std::string& socket_group() const { return socket_group_; }
  const std::string& reader_group() const { return reader_group_; }

  User a, b, c;
  gid_t socket_gid = 0, reader_gid = 0;

 private:
  static gid_t Gid(const std::string& name) {
    const struct group* g = ::getgrnam(name.c_str());
    return g != nullptr ? g->gr_gid : static_cast<gid_t>(-1);
  }
  // useradd and friends lock /etc/passwd: another test making users at the same moment
  // makes them fail at once (exit 10), so they are tried again.
  bool Tool(const std::vector<std::string>& argv) {
    RunResult r;
    for (int attempt = 0; attempt < 50; ++attempt) {
      r = Run(argv);
      if (r.exit_code != 10 && r.exit_code != 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (r.exit_code == 0) return true;
    why_ = argv[0] + " " + argv.back() + " failed (" + std::to_string(r.exit_code) + "): " + r.err;
    return false;
  }

  bool ok_ = false;
  bool groups_made_ = false;
  std::string why_;
  std::string socket_group_, reader_group_;
  std::vector<std::string> made_;
};

// A daemon whose socket A and B may use, with C's group as its reader group (and `extra`
// arguments), on `root` if given.
inline DaemonProcess::Options ReadersDaemon(const TestUsers& u, std::optional<std::string> root = std::nullopt,
                                            std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--socket-group", u.socket_group(), "--reader-group", u.reader_group()});
  return {extra, {}, true, 10, std::nullopt, root};
}
// Started, with the directory above its root and socket reachable by everyone, as an
// administrator's /var/log and /run are.
inline bool StartReachable(DaemonProcess& d) {
  if (!d.Start()) return false;
  return ::chmod(d.tmp().path().c_str(), 0755) == 0;
}

}  // namespace atraced::testing
