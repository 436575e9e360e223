#include "atraced/app/crash_runner.h"

#include <utility>

namespace atraced {

ThreadCrashRunner::ThreadCrashRunner(asio::io_context& io) : io_(io), thread_([this] { Loop(); }) {}

ThreadCrashRunner::~ThreadCrashRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_one();
  thread_.join();
}

void ThreadCrashRunner::Run(std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({std::move(inspect), std::move(done)});
  }
  wake_.notify_one();
}

void ThreadCrashRunner::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    CrashFacts facts = job.inspect();
    // Back to the loop, which owns the service: `done` runs there, in order.
    asio::post(io_, [done = std::move(job.done), facts = std::move(facts)]() mutable { done(std::move(facts)); });
    lock.lock();
  }
}

}  // namespace atraced
