// libatrace_client loaded the way plugin hosts and Python load libraries: dlopen(RTLD_NOW |
// RTLD_LOCAL) from a C program (dlopen_child.c) and ctypes (ctypes_client.py), never linked,
// against a real daemon. What each program prints is checked against the files the daemon wrote.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>

#include "support/daemon_process.h"
#include "support/missing_tool.h"
#include "support/subprocess.h"

using namespace atraced::testing;

namespace {

// A daemon that keeps every directory these programs make (record-num well above them).
DaemonProcess::Options Keeping() { return DaemonProcess::Options{{}, {}, true, 200}; }

// The rest of each line of `out` that starts with `key` and a space.
std::vector<std::string> Values(const std::string& out, const std::string& key) {
  std::vector<std::string> values;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + " ", 0) == 0) values.push_back(line.substr(key.size() + 1));
  }
  return values;
}

// The one value of `key`; "" (and a failed check) if there is not exactly one.
std::string Value(const std::string& out, const std::string& key) {
  const auto values = Values(out, key);
  INFO(key);
  CHECK(values.size() == 1);
  return values.size() == 1 ? values[0] : "";
}

// The pid in a file's event directory, .../schedule_event_<pid>_<time>/<file>.
std::string PidOf(const std::string& path) {
  const std::string marker = "/schedule_event_";
  const size_t at = path.rfind(marker);
  if (at == std::string::npos) return "";
  const size_t from = at + marker.size();
  return path.substr(from, path.find('_', from) - from);
}

std::string FileName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Starts the daemon and runs the C program's `scenario` against it.
RunResult Child(DaemonProcess& d, const std::string& scenario) {
  REQUIRE(d.Start());
  auto r = Run({ATRACE_CLIENT_DLOPEN_CHILD, ATRACE_CLIENT_LIBRARY, d.socket(), scenario});
  INFO(r.out);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  return r;
}

}  // namespace

TEST_CASE("dlopen RTLD_LOCAL: events reach the daemon, the library's descriptors are close-on-exec, "
          "dlclose unloads it and leaves none behind",
          "[client][dlopen]") {
  DaemonProcess d(Keeping());
  const auto r = Child(d, "use");
  INFO(r.out);
  CHECK(Value(r.out, "global scope") == "clean");
  const std::string emitted = Value(r.out, "emit");
  CHECK(FileName(emitted) == "schedule_tracer_dl_emit.txt");
  CHECK(ReadFile(emitted) == "emitted after dlopen\n");
  const std::string steps = Value(r.out, "steps");
  CHECK(FileName(steps) == "schedule_tracer_dl_steps.txt");
  CHECK(ReadFile(steps) == "by request\nby descriptor\n");
  // The connection and the file's passed descriptor, neither inherited by a program the
  // application executes.
  CHECK(Value(r.out, "library fds") == "2, without cloexec 0");
  CHECK(Value(r.out, "dlclose") == "0");
  CHECK(Value(r.out, "mapped") == "0");  // nothing pins the library (no NODELETE, no unique symbol)
  CHECK(Value(r.out, "fds left") == "0");
}

TEST_CASE("dlopen again after a dlclose with a handle still open: the second load works, the forgotten "
          "handle keeps its one connection as documented",
          "[client][dlopen]") {
  DaemonProcess d(Keeping());
  const auto r = Child(d, "reload");
  INFO(r.out);
  CHECK(ReadFile(Value(r.out, "first load")) == "first load\n");
  CHECK(Values(r.out, "dlclose") == std::vector<std::string>{"0", "0"});
  // docs/CLIENT.md: a handle not closed before dlclose is the application's leak, its socket
  // included; the library holds nothing else.
  CHECK(Value(r.out, "fds held after dlclose") == "1");
  CHECK(ReadFile(Value(r.out, "second load")) == "second load\n");
  CHECK(Value(r.out, "second connects") == "1");
  CHECK(Value(r.out, "fds held at the end") == "1");
}

TEST_CASE("fork after dlopen while a thread calls the library: the child gets its own connection, the "
          "parent's and its events in flight are untouched",
          "[client][dlopen][fork]") {
  DaemonProcess d(Keeping());
  const auto r = Child(d, "fork");
  INFO(r.out);
  const std::string before = Value(r.out, "parent before");
  const std::string after = Value(r.out, "parent after");
  const std::string inherited = Value(r.out, "child inherited");
  const std::string own = Value(r.out, "child own");
  CHECK(ReadFile(before) == "parent before fork\n");
  CHECK(ReadFile(after) == "parent after the child\n");
  CHECK(ReadFile(inherited) == "child, inherited handle\n");
  CHECK(ReadFile(own) == "child, own handle\n");
  // The child's events are its own process's, in its own directory.
  CHECK(PidOf(inherited) == PidOf(own));
  CHECK(PidOf(inherited) != PidOf(before));
  CHECK(PidOf(after) == PidOf(before));
  CHECK(Value(r.out, "child exit") == "0");
  CHECK(Value(r.out, "child connects") == "2");  // the parent's count, inherited, and its own
  // The parent never reconnected, and the three events in flight at the fork all completed.
  CHECK(Value(r.out, "parent flush") == "0");
  CHECK(Value(r.out, "parent connects") == "1, async ok 3, failed 0");
  CHECK(Value(r.out, "thread failed") == "0, connects 1");
  size_t in_flight = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(d.trace_dir())) {
    if (entry.path().filename() == "schedule_tracer_dl_parent_async.txt") {
      CHECK(PidOf(entry.path()) == PidOf(before));
      CHECK(ReadFile(entry.path()) == "in flight at the fork\n");
      ++in_flight;
    }
  }
  CHECK(in_flight == 3);
}

TEST_CASE("dlopen, then 8 threads' first calls at once: on own handles and a shared one, every event "
          "written whole",
          "[client][dlopen][threads]") {
  DaemonProcess d(Keeping());
  const auto r = Child(d, "threads");
  INFO(r.out);
  const auto own = Values(r.out, "own path");
  const auto shared = Values(r.out, "shared path");
  REQUIRE(own.size() == 8);
  REQUIRE(shared.size() == 8);
  std::set<std::string> dirs;
  for (size_t i = 0; i < 8; ++i) {
    CHECK(FileName(own[i]) == "schedule_tracer_dl_own_" + std::to_string(i) + ".txt");
    CHECK(ReadFile(own[i]) == "thread " + std::to_string(i) + ", own handle\n");
    CHECK(FileName(shared[i]) == "schedule_tracer_dl_shared_" + std::to_string(i) + ".txt");
    CHECK(ReadFile(shared[i]) == "thread " + std::to_string(i) + ", shared handle\n");
    dirs.insert(own[i].substr(0, own[i].rfind('/')));
    dirs.insert(shared[i].substr(0, shared[i].rfind('/')));
  }
  CHECK(dirs.size() == 16);  // one event each, none merged into another's
  CHECK(Value(r.out, "shared connects") == "1");
}

TEST_CASE("Python ctypes: emit, a passed descriptor, racing threads, multiprocessing's fork while a "
          "thread calls it",
          "[client][dlopen][python]") {
  if (ATRACE_CLIENT_INSTRUMENTED) {
    WARN("skipped: an instrumented library does not load into the uninstrumented python3");
    return;
  }
  if (const std::string missing = MissingTool("python3", "python3"); !missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  DaemonProcess d(Keeping());
  REQUIRE(d.Start());
  const auto r = Run({"/usr/bin/python3", ATRACE_CLIENT_PY_CHILD, ATRACE_CLIENT_LIBRARY, d.socket()});
  INFO(r.out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(ReadFile(Value(r.out, "emit")) == "emitted from ctypes\n");
  CHECK(ReadFile(Value(r.out, "steps")) == "by request\nby descriptor\n");
  const auto threads = Values(r.out, "thread");
  CHECK(threads.size() == 16);
  std::set<std::string> names;
  for (const auto& path : threads) {
    names.insert(FileName(path));
    const std::string name = FileName(path);
    const std::string i = name.substr(name.rfind('_') + 1, 1);
    const bool shared = name.find("_shared_") != std::string::npos;
    CHECK(ReadFile(path) == "thread " + i + (shared ? ", shared handle\n" : ", own handle\n"));
  }
  CHECK(names.size() == 16);
  const std::string child = Value(r.out, "child inherited");
  const std::string after = Value(r.out, "parent after");
  CHECK(ReadFile(child) == "child, inherited handle\n");
  CHECK(ReadFile(after) == "parent after the child\n");
  CHECK(PidOf(child) != PidOf(after));
  CHECK(Value(r.out, "child exit") == "0");
  CHECK(Value(r.out, "child connects") == "2");
  CHECK(Value(r.out, "parent connects") == "1");
  CHECK(Value(r.out, "worker connects") == "1");
  CHECK(Value(r.out, "failures") == "0");
}
