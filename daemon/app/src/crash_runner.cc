#include "atraced/app/crash_runner.h"

#include <memory>
#include <utility>

namespace atraced {

ThreadCrashRunner::ThreadCrashRunner(asio::io_context& io)
    // No drain at shutdown: a queued inspection would cost its budget for a daemon going away.
    : pool_(1, [&io](std::function<void()> done) { asio::post(io, std::move(done)); }, std::chrono::milliseconds(0),
            "atraced-crash") {}

void ThreadCrashRunner::Run(uint32_t uid, std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) {
  auto facts = std::make_shared<CrashFacts>();
  pool_.Submit(
      uid, [facts, inspect = std::move(inspect)] { *facts = inspect(); },
      // Back on the loop, which owns the service: `done` runs there.
      [facts, done = std::move(done)] { done(std::move(*facts)); });
}

}  // namespace atraced
