// The hang watch's CPU time of a process (/proc/PID/stat utime + stime), of a real child.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "atraced/processes/process_table.h"

using namespace atraced;
using namespace std::chrono_literals;

TEST_CASE("stat's utime and stime are read as CPU time", "[processes][cpu]") {
  const std::string stat =
      "77 (a (b) c) S 1 77 77 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345 1000 10 1844 0 0 0 0 0 0 0 0 0 0 0 0 "
      "17 0 0 0 0 0 0 0 0 0 0 0 0 0 9";
  const auto end = ParseProcStatEnd(stat);
  REQUIRE(end);
  CHECK(end->cpu_ticks == 300);
  CHECK(end->start_ticks == 12345);
  CHECK(end->state == 'S');
}

TEST_CASE("a spinning child's CPU time grows, and a sleeping one's does not, and a dead one has none", "[processes][cpu]") {
  ProcProcessTable table;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t spinner = ::fork();
  REQUIRE(spinner >= 0);
  if (spinner == 0) {
    ::close(ready[0]);
    (void)!::write(ready[1], "x", 1);
    volatile uint64_t n = 0;
    for (;;) n = n + 1;
  }
  const pid_t sleeper = ::fork();
  REQUIRE(sleeper >= 0);
  if (sleeper == 0) {
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  const auto spin_facts = table.Lookup(spinner);
  const auto sleep_facts = table.Lookup(sleeper);
  REQUIRE(spin_facts);
  REQUIRE(sleep_facts);
  const auto spin0 = table.CpuTime(spinner, spin_facts->start_ticks);
  const auto sleep0 = table.CpuTime(sleeper, sleep_facts->start_ticks);
  REQUIRE(spin0);
  REQUIRE(sleep0);
  // Polled, not timed: the spinner gets CPU when the busy machine gives it some.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  std::optional<std::chrono::milliseconds> spin1 = spin0;
  while (*spin1 < *spin0 + 100ms && std::chrono::steady_clock::now() < deadline) {
    ::usleep(20000);
    spin1 = table.CpuTime(spinner, spin_facts->start_ticks);
    REQUIRE(spin1);
  }
  CHECK(*spin1 >= *spin0 + 100ms);
  CHECK(table.CpuTime(sleeper, sleep_facts->start_ticks) <= *sleep0 + 10ms);
  // Another start time is another process.
  CHECK_FALSE(table.CpuTime(spinner, spin_facts->start_ticks + 1));
  ::kill(spinner, SIGKILL);
  ::kill(sleeper, SIGKILL);
  ::waitpid(spinner, nullptr, 0);
  ::waitpid(sleeper, nullptr, 0);
  CHECK_FALSE(table.CpuTime(spinner, spin_facts->start_ticks));
  ::close(ready[0]);
}
