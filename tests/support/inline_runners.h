// The I/O workers and the crash runner as a test without an event loop sees them: each
// finishes its work and its completion before returning. The service takes the daemon's path
// (Submit or Run, the completion, the DeferredReply answered); the answer only comes before
// Handle returns, so a test's request gets its reply in the batch.
#pragma once

#include <functional>
#include <utility>

#include "atraced/io/job_runner.h"
#include "atraced/processes/crash_inspector.h"

namespace atraced::testing {

class InlineIoRunner final : public JobRunner {
 public:
  void Submit(uint32_t /*uid*/, std::function<void()> work, std::function<void()> done) override {
    work();
    done();
  }
};

class InlineCrashRunner final : public CrashRunner {
 public:
  void Run(uint32_t /*uid*/, std::function<CrashFacts()> inspect, std::function<void(CrashFacts)> done) override {
    done(inspect());
  }
};

}  // namespace atraced::testing
