// The daemon's crash runner (app/crash_runner.h): inspections run off the loop, one at a
// time, their facts come back on the loop, and the uids with crashes waiting are served in
// turn, so one user's crash loop cannot hold another user's crash past its handler's wait.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "atraced/app/crash_runner.h"

namespace atraced {
namespace {

TEST_CASE("crash inspections are served one uid at a time in turn, the facts handed back on the loop",
          "[app][crash][fairness]") {
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  std::mutex mu;
  std::condition_variable cv;
  bool open = false, entered = false;
  std::vector<std::string> finished;  // the loop's thread only
  const auto loop_thread = std::this_thread::get_id();
  ThreadCrashRunner runner(io);
  auto facts = [](std::string name) { return CrashFacts{name, "", ""}; };
  auto done = [&](CrashFacts f) {
    CHECK(std::this_thread::get_id() == loop_thread);
    finished.push_back(f.threads);
    if (finished.size() == 5) io.stop();
  };
  // uid 1000 crashes in a loop: its first inspection runs (and blocks), four more wait.
  runner.Run(1000, [&] {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
    return facts("a0");
  }, done);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  runner.Run(1000, [&] { return facts("a1"); }, done);
  runner.Run(1000, [&] { return facts("a2"); }, done);
  runner.Run(1000, [&] { return facts("a3"); }, done);
  // Another user's crash arrives behind them.
  runner.Run(2000, [&] { return facts("b0"); }, done);
  {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
  }
  cv.notify_all();
  io.run_for(std::chrono::seconds(10));
  REQUIRE(finished.size() == 5);
  // b0 waits for the inspection running and one turn of uid 1000, not for all of its queue.
  CHECK(finished == std::vector<std::string>{"a0", "a1", "b0", "a2", "a3"});
}

}  // namespace
}  // namespace atraced
