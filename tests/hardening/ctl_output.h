// Runs the atracectl binary the user runs (ATRACECTL_BINARY, set for the hardening tests)
// against a test daemon.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/daemon_process.h"
#include "support/subprocess.h"

namespace atraced::testing {

// `atracectl --socket S <args...>`'s standard output; it must exit 0.
inline std::string CtlOutput(const DaemonProcess& d, const std::vector<std::string>& args) {
  std::vector<std::string> argv{ATRACECTL_BINARY, "--socket", d.socket()};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = Run(argv);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  return r.out;
}

}  // namespace atraced::testing
