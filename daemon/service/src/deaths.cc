#include "deaths.h"

#include <signal.h>

#include <algorithm>
#include <string>

#include "atraced/processes/oom_count.h"
#include "atraced/store/trace_time.h"
#include "crash_report.h"

namespace atraced {
namespace {

std::chrono::milliseconds Backoff(uint32_t checks) {
  return std::chrono::milliseconds(5) * (1u << std::min<uint32_t>(checks > 0 ? checks - 1 : 0, 7));
}

}  // namespace

void Departures::Depart(Client client) {
  departures_.push_back({std::move(client), clock_.Now(), 0});
  Check();
}

void Departures::ForgetAll() {
  stopped_ = true;
  for (Departure& d : departures_) forget_(d.client);
  departures_.clear();
}

void Departures::Schedule() {
  if (departures_.empty() || stopped_ || !schedule_) return;
  uint32_t fewest = kMaxChecks;
  for (const Departure& d : departures_) fewest = std::min(fewest, d.checks);
  schedule_(Backoff(fewest), [this] { Check(); });
}

void Departures::Check() {
  for (size_t i = 0; i < departures_.size();) {
    Departure& d = departures_[i];
    const ProcessEnd end = processes_.CheckEnded(d.client.peer.pid, d.client.start_ticks, d.client.pidfd);
    ++d.checks;
    if (end.gone) {
      Record(d, end);
    } else if (d.checks >= kMaxChecks) {
      log_.Info("pid ", d.client.peer.pid, " closed its connection without GOODBYE and is still running (an exec, ",
                "a closed descriptor, or a connection the daemon dropped); dropping its ", d.client.rings.size(),
                " ring(s)");
    } else {
      ++i;
      continue;
    }
    forget_(d.client);
    departures_.erase(departures_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  Schedule();
}

void Departures::Record(const Departure& d, const ProcessEnd& end) {
  const Client& c = d.client;
  int signo = 0;
  DeathFacts death;
  death.how = DescribeEnd(end, &signo);
  // The OOM killer sends SIGKILL: asked whenever that is possible (also when the status is
  // unknown or unreadable), never for an end the status explains otherwise.
  const bool maybe_oom = signo == SIGKILL || !end.wait_status || *end.wait_status == 0;
  // Printable: a cgroup's name may hold control characters, and the report is one line per fact.
  if (maybe_oom) death.oom = Printable(DescribeOomKill(c.oom_at_hello, processes_.OomKillsIn(c.oom_at_hello.file)));
  std::string ring_list;
  std::vector<const HeldRing*> chosen = RingSaver::AtDeath(c, &ring_list);
  death.closed = d.closed;
  death.written = clock_.Now();
  HeldRing::File report{TraceFileName::Stackcore({signo, c.peer.pid, c.program, FormatTraceTime(death.written, c.utc_offset_s)}),
                        DeathReportText(c, death, chosen.size(), ring_list)};
  ++counters_.deaths_recorded;
  std::string what = std::to_string(c.peer.pid) + " (" + c.program + ") ended without GOODBYE: " + death.how +
                     (death.oom.empty() ? "" : "; " + death.oom) + "; stackcore dir with " +
                     std::to_string(chosen.size()) + " ring(s)";
  saver_.Save(c, EventKind::kStackcore, chosen, {std::move(report)}, [this, what = std::move(what)](Status r) {
    log_.Notice("pid ", what, !r.ok() ? " failed: " + r.message() : std::string(" written"));
  });
}

}  // namespace atraced
