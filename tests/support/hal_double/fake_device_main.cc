// atrace_fake_device: plays CANN's device-side trace server for one logical device over
// the libascend_hal.so test double, driven through a control socket (README.md).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "ascend_hal_double.h"
#include "control_server.h"
#include "device_commands.h"
#include "device_log.h"
#include "device_server.h"
#include "device_sessions.h"

using namespace atraced::hal_double::device;

namespace {

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "atrace_fake_device: %s\n"
               "usage: atrace_fake_device --control PATH [--dir DIR] [--device LOCALID] [--phy PHYID]\n"
               "                          [--hello-silent] [--hello-mismatch] [--refuse-long-link] [--close-long-links]\n"
               "                          [--tick-ms MS]\n"
               "  --dir defaults to $ATRACE_HAL_DOUBLE_DIR; --phy defaults to --device.\n",
               why);
  std::exit(2);
}

int Id(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value >= 1024) Usage("device ids are integers in [0, 1024)");
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
  DeviceOptions options;
  std::string control, dir;
  bool phy_given = false;
  int tick_ms = SessionStore::kTickMs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage(("missing value after " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--dir") {
      dir = value();
    } else if (arg == "--device") {
      options.local_id = Id(value());
    } else if (arg == "--phy") {
      options.phy_id = Id(value());
      phy_given = true;
    } else if (arg == "--control") {
      control = value();
    } else if (arg == "--hello-silent") {
      options.hello_silent = true;
    } else if (arg == "--hello-mismatch") {
      options.hello_mismatch = true;
    } else if (arg == "--tick-ms") {
      char* end = nullptr;
      const char* text = value();
      const long ms = std::strtol(text, &end, 10);
      if (*end != '\0' || ms < 1 || ms > 1000) Usage("--tick-ms takes an integer in [1, 1000]");
      tick_ms = static_cast<int>(ms);
    } else if (arg == "--refuse-long-link") {
      options.refuse_long_link = true;
    } else if (arg == "--close-long-links") {
      options.close_long_links = true;
    } else {
      Usage(("unknown argument " + arg).c_str());
    }
  }
  if (!phy_given) options.phy_id = options.local_id;
  if (control.empty()) Usage("--control PATH is required");
  if (!dir.empty()) ::setenv("ATRACE_HAL_DOUBLE_DIR", dir.c_str(), 1);  // the double reads it at each call
  if (std::getenv("ATRACE_HAL_DOUBLE_DIR") == nullptr) Usage("--dir or ATRACE_HAL_DOUBLE_DIR is required");
  ::signal(SIGPIPE, SIG_IGN);
  LogDevice() = options.local_id;

  // The HDC server first, then the control socket: once a test can talk to the control
  // socket, hosts can connect.
  HDC_SERVER server = nullptr;
  const drvError_t rc = drvHdcServerCreate(options.local_id, HDC_SERVICE_TYPE_BBOX, &server);
  if (rc != DRV_ERROR_NONE) {
    Say("drvHdcServerCreate failed (%d)", rc);
    return 1;
  }
  const int control_fd = ListenControl(control);
  if (control_fd < 0) {
    Say("cannot listen on control socket %s: %s", control.c_str(), std::strerror(errno));
    return 1;
  }

  static SessionStore store;  // static: detached threads may still use it while main returns
  store.SetTickMs(tick_ms);
  static DeviceServer device(options, store);
  static Commands commands(options, store);
  std::thread([server] { device.AcceptLoop(server); }).detach();
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(store.tick_ms()));
      store.Tick();
    }
  }).detach();
  Say("ready: phy %d, hdc dir %s, control %s%s%s%s%s", options.phy_id, std::getenv("ATRACE_HAL_DOUBLE_DIR"),
      control.c_str(), options.hello_silent ? ", hello-silent" : "", options.hello_mismatch ? ", hello-mismatch" : "",
      options.refuse_long_link ? ", refuse-long-link" : "", options.close_long_links ? ", close-long-links" : "");

  ServeControl(control_fd, commands);
  Say("quit");
  drvHdcServerDestroy(server);  // removes the HDC socket: hosts now get "no peer"
  ::unlink(control.c_str());
  std::fflush(stderr);
  // Detached threads may be inside the double: leave without running destructors.
  ::_exit(0);
}
