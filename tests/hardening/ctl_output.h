// Runs the atracectl binary the user runs (ATRACECTL_BINARY, set for the hardening tests)
// against a test daemon.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/daemon_process.h"

namespace atraced::testing {

// `atracectl --socket S <args>`'s standard output; it must exit 0.
inline std::string CtlOutput(const DaemonProcess& d, const std::string& args) {
  const std::string cmd = std::string(ATRACECTL_BINARY) + " --socket '" + d.socket() + "' " + args;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[512];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return out;
}

}  // namespace atraced::testing
