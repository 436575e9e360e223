// Deaths without GOODBYE. A ring-holding connection that closes without GOODBYE is kept as a
// departure until the kernel says whether its process ended (the socket closes a moment
// before the process becomes a zombie). An ended process gets a stackcore event dir: a
// report, then one file per ring. One still running after about 3 s (an exec, a closed
// descriptor, a connection the daemon dropped) loses its rings.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "atraced/common/clock.h"
#include "atraced/common/log.h"
#include "atraced/processes/process_table.h"
#include "atraced/service/service_types.h"
#include "client.h"
#include "service_context.h"
#include "ring_saver.h"

namespace atraced {

class Departures {
 public:
  // `forget` releases what a client still holds once it is gone for good (its rings, its
  // hold on its process dir).
  // The next check is asked of ServiceDependencies::schedule_departures.
  Departures(const ServiceContext& ctx, RingSaver& saver, std::function<void(Client&)> forget)
      : processes_(*ctx.deps.processes), saver_(saver), clock_(*ctx.deps.clock), log_(*ctx.deps.log),
        counters_(ctx.counters), schedule_(ctx.deps.schedule_departures), forget_(std::move(forget)) {}

  // The client's connection closed without GOODBYE while it held rings.
  void Depart(Client client);
  // Re-checks every departure: records the ended ones, lets go of the ones still running
  // after the last check, and asks the scheduler for the next check.
  void Check();
  // The daemon is stopping: its clients are alive, and nobody will run a check any more.
  void ForgetAll();
  size_t size() const { return departures_.size(); }

  // A departed connection's process is checked at its close, then after 5, 10, 20 ... 640
  // ms: about 3 s in all before a process that keeps running is taken to have only let go.
  static constexpr uint32_t kMaxChecks = 12;

 private:
  struct Departure {
    Client client;
    std::chrono::system_clock::time_point closed{};
    uint32_t checks = 0;
  };
  // Writes the stackcore dir of a departed client whose process ended.
  void Record(const Departure& d, const ProcessEnd& end);
  void Schedule();

  ProcessTable& processes_;
  RingSaver& saver_;
  Clock& clock_;
  Logger& log_;
  ServiceCounters& counters_;
  const std::function<void(std::chrono::milliseconds, std::function<void()>)>& schedule_;
  std::function<void(Client&)> forget_;
  bool stopped_ = false;  // ForgetAll ran: nothing is scheduled any more
  std::vector<Departure> departures_;
};

}  // namespace atraced
