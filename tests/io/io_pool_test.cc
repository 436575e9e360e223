// The I/O workers alone (daemon/io/io_pool.h): every job runs and its completion reaches
// the loop, the uids with work are served in turn, a slow job holds no other worker, and
// shutdown lets what is queued land within its deadline.
#include <catch2/catch.hpp>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "atraced/io/io_pool.h"

namespace atraced {
namespace {

using namespace std::chrono_literals;

// The event loop's side: completions posted by the workers, run when the test says.
class FakeLoop {
 public:
  IoPool::Post post() {
    return [this](std::function<void()> done) {
      std::lock_guard<std::mutex> lock(mu_);
      posted_.push_back(std::move(done));
      cv_.notify_all();
    };
  }
  // Waits until `n` completions are posted, then runs them on this thread.
  bool RunPosted(size_t n, std::chrono::milliseconds within = 10s) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, within, [&] { return posted_.size() >= n; })) return false;
    auto run = std::move(posted_);
    posted_.clear();
    lock.unlock();
    for (auto& f : run) f();
    return true;
  }
  size_t posted() {
    std::lock_guard<std::mutex> lock(mu_);
    return posted_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> posted_;
};

// A job that waits until the test opens it.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool open_ = false;
};

TEST_CASE("every job runs on a worker and its completion is posted to the loop", "[io]") {
  FakeLoop loop;
  std::atomic<int> ran{0};
  int completed = 0;  // the loop's thread only
  const auto loop_thread = std::this_thread::get_id();
  {
    IoPool pool(2, loop.post());
    for (int i = 0; i < 100; ++i) {
      pool.Submit(static_cast<uint32_t>(i % 3), [&] {
        CHECK(std::this_thread::get_id() != loop_thread);
        ++ran;
      }, [&] { ++completed; });
    }
    REQUIRE(loop.RunPosted(100));
  }
  CHECK(ran == 100);
  CHECK(completed == 100);
}

TEST_CASE("the uids with queued jobs are served in turn, whatever one of them queued", "[io][fairness]") {
  FakeLoop loop;
  Gate gate;
  std::mutex mu;
  std::vector<std::string> order;
  auto record = [&](std::string what) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(std::move(what));
  };
  IoPool pool(1, loop.post());
  pool.Submit(7, [&] { gate.Wait(); }, [] {});  // holds the only worker
  gate.WaitEntered();
  for (int i = 0; i < 5; ++i) pool.Submit(1000, [&, i] { record("a" + std::to_string(i)); }, [] {});
  pool.Submit(2000, [&] { record("b0"); }, [] {});
  pool.Submit(3000, [&] { record("c0"); }, [] {});
  pool.Submit(2000, [&] { record("b1"); }, [] {});
  CHECK(pool.in_flight() == 9);
  gate.Open();
  REQUIRE(loop.RunPosted(9));
  // uid 1000 queued five first, yet waits its turn after each of the others.
  CHECK(order == std::vector<std::string>{"a0", "b0", "c0", "a1", "b1", "a2", "a3", "a4"});
  CHECK(pool.in_flight() == 0);
}

TEST_CASE("a job stuck on a slow disk holds its worker only", "[io]") {
  FakeLoop loop;
  Gate stuck;
  std::atomic<int> others{0};
  IoPool pool(2, loop.post());
  pool.Submit(1000, [&] { stuck.Wait(); }, [] {});
  stuck.WaitEntered();
  for (int i = 0; i < 10; ++i) pool.Submit(2000, [&] { ++others; }, [] {});
  CHECK(loop.RunPosted(10));  // all ten, while the first is still stuck
  CHECK(others == 10);
  CHECK(pool.in_flight() == 1);
  stuck.Open();
  CHECK(loop.RunPosted(1));
}

TEST_CASE("stopping lets the queued jobs land within the deadline and drops the rest", "[io]") {
  SECTION("within the deadline: every job runs") {
    FakeLoop loop;
    std::atomic<int> ran{0};
    {
      IoPool pool(1, loop.post(), 10s);
      for (int i = 0; i < 20; ++i) pool.Submit(1, [&] { ++ran; }, [] {});
    }
    CHECK(ran == 20);
    CHECK(loop.posted() == 20);
  }
  SECTION("past it: the job running finishes, the queued ones are dropped") {
    FakeLoop loop;
    std::atomic<int> ran{0};
    Gate gate;
    std::thread opener;
    {
      IoPool pool(1, loop.post(), 0ms);
      pool.Submit(1, [&] { gate.Wait(); ++ran; }, [] {});
      gate.WaitEntered();
      for (int i = 0; i < 20; ++i) pool.Submit(1, [&] { ++ran; }, [] {});
      // The destructor starts stopping before the gate opens: the deadline has passed by
      // the time the worker looks again.
      opener = std::thread([&] {
        std::this_thread::sleep_for(50ms);
        gate.Open();
      });
    }
    opener.join();
    CHECK(ran == 1);
  }
}

TEST_CASE("io-workers = auto is the CPUs minus one for the loop, 2 to 16", "[io]") {
  const size_t n = IoPool::AutoWorkers();
  CHECK(n >= 2);  // never one: one user's long save would hold every other user's saves
  CHECK(n <= 16);
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
  const int cpus = CPU_COUNT(&set);
  if (cpus >= 3 && cpus <= 17) CHECK(n == static_cast<size_t>(cpus - 1));
  if (cpus <= 3) CHECK(n == 2);
}

}  // namespace
}  // namespace atraced
