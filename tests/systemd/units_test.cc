// The unit templates and the installed configuration file say what the issue requires.
// (systemd-analyze verify and the installed tree are checked by check_install.sh.)
#include <catch2/catch.hpp>

#include <sstream>

#include "atraced/app/config.h"
#include "support/temp_dir.h"

using namespace atraced;
using namespace atraced::testing;

namespace {

std::string Source(const std::string& rel) { return ReadFile(std::string(ATRACED_SOURCE_DIR) + "/" + rel); }

// The lines of a unit file, without comments and blank lines.
std::vector<std::string> Settings(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    out.push_back(line);
  }
  return out;
}

bool Has(const std::vector<std::string>& settings, const std::string& line) {
  for (auto& s : settings) {
    if (s == line) return true;
  }
  return false;
}

bool HasKey(const std::vector<std::string>& settings, const std::string& key) {
  for (auto& s : settings) {
    if (s.rfind(key + "=", 0) == 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("system socket unit", "[systemd][units]") {
  auto s = Settings(Source("systemd/atraced.socket.in"));
  REQUIRE_FALSE(s.empty());
  CHECK(Has(s, "ListenStream=/run/atraced/atraced.sock"));
  CHECK(Has(s, "SocketMode=0660"));
  CHECK(Has(s, "SocketGroup=atrace"));
  CHECK(Has(s, "WantedBy=sockets.target"));
}

TEST_CASE("system service unit: notify, watchdog, reload, hardening that leaves /proc whole", "[systemd][units]") {
  auto s = Settings(Source("systemd/atraced.service.in"));
  REQUIRE_FALSE(s.empty());
  for (const char* line :
       {"Type=notify", "WatchdogSec=30s", "Restart=on-failure", "ExecReload=/bin/kill -HUP $MAINPID",
        "ExecStart=@ATRACED_SBIN_DIR@/atraced --config @ATRACED_CONF_FILE@", "Requires=atraced.socket",
        "NoNewPrivileges=yes", "ProtectSystem=strict", "ReadWritePaths=/var/log/ascend", "PrivateTmp=yes",
        "ProtectHome=yes", "RestrictAddressFamilies=AF_UNIX", "SystemCallFilter=@system-service",
        "LockPersonality=yes", "MemoryDenyWriteExecute=yes", "ProtectProc=default", "ProcSubset=all",
        // crash capture: ptrace and nothing more of @debug; CAP_SETUID and CAP_SETGID for the
        // unwind helper to become the client's user (issue #20); CAP_SYS_PTRACE still, for root
        // clients with capabilities the daemon lacks (app_tests "a root process needs
        // CAP_SYS_PTRACE, a user's process needs no capability")
        "SystemCallFilter=ptrace process_vm_readv",
        "CapabilityBoundingSet=CAP_CHOWN CAP_DAC_OVERRIDE CAP_SETUID CAP_SETGID CAP_SYS_PTRACE"}) {
    CAPTURE(line);
    CHECK(Has(s, line));
  }
  // Nothing that would hide the clients' /proc entries or make the trace root read-only.
  CHECK_FALSE(HasKey(s, "User"));
  CHECK_FALSE(HasKey(s, "DynamicUser"));
  CHECK_FALSE(HasKey(s, "ReadOnlyPaths"));
  CHECK_FALSE(HasKey(s, "InaccessiblePaths"));
  CHECK_FALSE(HasKey(s, "RuntimeDirectory"));  // it would remove the socket's directory on stop
  // A root service needs none: its capabilities come from the bounding set.
  CHECK_FALSE(HasKey(s, "AmbientCapabilities"));
}

TEST_CASE("user units: socket in the runtime dir, the daemon's default root", "[systemd][units]") {
  auto sock = Settings(Source("systemd/user/atraced.socket.in"));
  CHECK(Has(sock, "ListenStream=%t/atraced.sock"));
  auto svc = Settings(Source("systemd/user/atraced.service.in"));
  CHECK(Has(svc, "Type=notify"));
  CHECK(Has(svc, "ExecStart=@ATRACED_SBIN_DIR@/atraced"));  // no --root, no --config: $HOME/ascend
  CHECK(HasKey(svc, "WatchdogSec"));
}

TEST_CASE("sysusers.d and tmpfiles.d entries", "[systemd][units]") {
  CHECK(Settings(Source("systemd/atraced.sysusers")) == std::vector<std::string>{"g atrace - -"});
  CHECK(Settings(Source("systemd/atraced.tmpfiles")) ==
        std::vector<std::string>{"d /var/log/ascend        0711 root root -",
                                 "d /var/log/ascend/atrace 0750 root adm  -"});
}

TEST_CASE("the installed atraced.conf is conf/atraced.conf with root = /var/log/ascend", "[systemd][units]") {
  const std::string installed = ReadFile(ATRACED_INSTALLED_CONF);
  REQUIRE_FALSE(installed.empty());
  Config c;
  REQUIRE(ParseConfigText(installed, "atraced.conf", &c) == "");
  CHECK(c.configured_root == "/var/log/ascend");
  CHECK_FALSE(c.root);
  CHECK_FALSE(c.configured_record_num);
  CHECK_FALSE(c.socket_path);
  // Shipped set (issue 23): a daemon started by hand with this file makes a socket the
  // group's members can use, as atraced.socket's is.
  CHECK(c.socket_group == std::optional<std::string>("atrace"));
  // The rest is the documented file, word for word.
  std::string documented = Source("conf/atraced.conf");
  const std::string from = "# root = /var/log/ascend\n";
  documented.replace(documented.find(from), from.size(), "root = /var/log/ascend\n");
  REQUIRE(installed.size() > documented.size());
  CHECK(installed.substr(installed.size() - documented.size()) == documented);
}
