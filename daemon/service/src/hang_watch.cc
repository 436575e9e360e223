#include "hang_watch.h"

#include <algorithm>
#include <memory>

#include "atraced/common/clock.h"
#include "atraced/common/log.h"
#include "atraced/service/main_thread_frames.h"
#include "hang_dump_path.h"

namespace atraced {
namespace {

constexpr size_t kMaxFrames = 8;         // the main thread's top frames in a journal entry
constexpr size_t kMaxTracers = 16;       // tracers whose last record an entry carries
constexpr size_t kMaxRecordBytes = 160;  // of each last record

// Where the process is in its collectives, from the ledger it holds (the process wrote it:
// ReadLedger checks every byte, and only bounded, escaped values reach the journal).
void AddCommunicators(const Client& c, ProcessEvent& e) {
  for (const auto& [object, held] : c.rings) {
    std::optional<proto::LedgerSnapshot> snap = held.ring.LedgerNow();
    if (!snap || !snap->header_valid) continue;
    e.communicators = proto::LatestPerName(proto::SummarizeLedger(*snap));
    if (e.communicators.size() > proto::kMaxJournalCommunicators) e.communicators.resize(proto::kMaxJournalCommunicators);
    e.completion_tracked = snap->completion_tracked();
    return;  // a process holds one ledger
  }
}

int64_t Seconds(std::chrono::milliseconds d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); }

std::string StallNote(const ProcessEvent& e) {
  return "no record for " + std::to_string(Seconds(e.stalled_for)) + " s (hang timeout " +
         std::to_string(Seconds(e.hang_timeout)) + " s) while alive, " + e.state;
}

}  // namespace

HangWatch::HangWatch(const ServiceContext& ctx, ClientTable& clients, ProcessDumps& dumps)
    : ctx_(ctx), clients_(clients), dumps_(dumps),
      watch_([&processes = *ctx.deps.processes](const Key& k) { return processes.CpuTime(k.pid, k.start_ticks); }) {}

std::chrono::milliseconds HangWatch::TimeoutOf(const Client& c) {
  const HangWatchSettings& s = ctx_.limits.hang;
  if (s.timeout.count() <= 0 || (c.labels.job.empty() && !s.watch_unlabelled)) return std::chrono::milliseconds(0);
  // The process may ask for less, never for more (ATRACE_HANG_TIMEOUT, with its labels).
  return c.hang_timeout && *c.hang_timeout < s.timeout ? *c.hang_timeout : s.timeout;
}

ProcessEvent HangWatch::EventOf(const Client& c, ProcessEvent::Kind kind) {
  ProcessEvent e;
  e.kind = kind;
  e.pid = c.peer.pid;
  e.uid = c.peer.uid;
  e.program = c.program;
  e.labels = c.labels;
  e.hang_timeout = TimeoutOf(c);
  return e;
}

void HangWatch::Tick() {
  samples_.clear();
  sample_of_.clear();
  for (auto& [id, c] : clients_) {
    if (c.rings.empty()) continue;  // the holder of its process's rings
    // A process not watched (timeout 0) is tracked all the same, never judged: `list --live`
    // shows when its rings last moved.
    const std::chrono::milliseconds timeout = TimeoutOf(c);
    uint64_t written = 0;
    for (const auto& [object, held] : c.rings) written += held.ring.write_index();
    const Key key{c.peer.pid, c.start_ticks};
    // One sample per process, whichever of its connections hold its rings.
    auto [at, added] = sample_of_.try_emplace(key, samples_.size());
    if (added) {
      samples_.push_back({key, written, timeout});
    } else {
      samples_[at->second].written += written;
    }
  }
  const auto now = ctx_.deps.clock->Now();
  const std::vector<ProgressWatch::Stall> stalls = watch_.Observe(now, samples_);
  if (!stalls.empty()) Capture(stalls, now);
}

void HangWatch::Capture(const std::vector<ProgressWatch::Stall>& stalls, std::chrono::system_clock::time_point now) {
  Logger& log = *ctx_.deps.log;
  // The captures: one per uid and job (an unlabelled process is a job of its own).
  std::map<std::pair<uint32_t, std::string>, std::vector<const ProgressWatch::Stall*>> jobs;
  for (const ProgressWatch::Stall& s : stalls) {
    ++stalls_;
    for (auto& [id, c] : clients_) {
      if (c.rings.empty() || c.peer.pid != s.key.pid || c.start_ticks != s.key.start_ticks) continue;
      const std::string job = c.labels.job.empty() ? "pid " + std::to_string(c.peer.pid) : c.labels.job;
      jobs[{c.peer.uid, job}].push_back(&s);
      break;
    }
  }
  const RateLimit budget{std::chrono::hours(1), ctx_.limits.hang.dumps_per_hour};
  for (const auto& entry : jobs) {
    const std::pair<uint32_t, std::string> job_key = entry.first;
    const std::vector<const ProgressWatch::Stall*>& stalled = entry.second;
    const uint32_t uid = job_key.first;
    const std::string& job = job_key.second;
    if (capturing_.count(job_key)) continue;  // its dump is under way: what it finds is this moment's
    const bool labelled = job.rfind("pid ", 0) != 0;
    std::vector<HangTarget> targets;
    auto events = std::make_shared<std::vector<ProcessEvent>>();
    size_t left_out = 0;
    for (auto& member : clients_) {
      const ClientId id = member.first;
      const Client& c = member.second;
      if (c.rings.empty() || c.peer.uid != uid) continue;  // never another user's process
      const Key key{c.peer.pid, c.start_ticks};
      const auto own = std::find_if(stalled.begin(), stalled.end(), [&](const auto* s) { return s->key == key; });
      if (labelled ? c.labels.job != job : own == stalled.end()) continue;
      if (std::any_of(targets.begin(), targets.end(), [&](const HangTarget& t) {
            const Client* other = clients_.Find(t.holder);
            return other != nullptr && other->peer.pid == c.peer.pid && other->start_ticks == c.start_ticks;
          })) {
        continue;  // its process is in already (a second connection holding rings)
      }
      if (!dump_budget_.Take(budget, now)) {
        ++left_out;
        continue;
      }
      ProcessEvent e = EventOf(c, ProcessEvent::Kind::kHang);
      e.stalled_pid = stalled.front()->key.pid;
      if (own != stalled.end()) {
        e.stalled_for = (*own)->stalled_for;
        e.state = (*own)->busy ? "busy" : "blocked";
      } else {
        e.stalled_for = watch_.StillFor(key, now);
        e.state = "running";
      }
      for (const auto& [object, held] : c.rings) {
        if (e.last_records.size() >= kMaxTracers) break;
        if (auto last = held.ring.LastRecord(kMaxRecordBytes)) e.last_records.emplace_back(held.ring.name(), last->bytes);
      }
      AddCommunicators(c, e);
      watch_.Captured(key);  // judged again only once its rings move
      targets.push_back({id, own != stalled.end() ? "pid " + std::to_string(e.pid) + " stalled: " + StallNote(e)
                                                  : "dumped with job " + job + ", whose pid " +
                                                        std::to_string(e.stalled_pid) + " stalled; this one's rings last moved " +
                                                        std::to_string(Seconds(e.stalled_for)) + " s ago"});
      events->push_back(std::move(e));
    }
    if (left_out > 0) {
      rate_limited_ += left_out;
      log.Warning("hang watch: ", left_out, " process(es) of job ", job, " (uid ", uid,
                  ") not dumped: hang-dumps-per-hour (", budget.burst, ") reached on this host");
    }
    if (targets.empty()) continue;
    log.Warning("hang watch: pid ", stalled.front()->key.pid, " of job ", job, " (uid ", uid, ") stalled for ",
                Seconds(stalled.front()->stalled_for), " s, ", stalled.front()->busy ? "busy" : "blocked", "; dumping ",
                targets.size(), " process(es) of the job on this host");
    capturing_.insert(job_key);  // before the call: its answer may come before it returns
    DumpForHang(dumps_, std::move(targets), [this, job_key, events](std::vector<HangDumped> results) {
      capturing_.erase(job_key);
      for (size_t i = 0; i < results.size() && i < events->size(); ++i) {
        ProcessEvent& e = (*events)[i];
        e.dir = results[i].dir;
        e.refused = results[i].refused;
        e.top_frames = MainThreadFrames(results[i].backtrace, e.pid, kMaxFrames);
        if (!e.dir.empty()) ++dumped_;
        ctx_.deps.log->Notice("hang watch: pid ", e.pid, " of job ", job_key.second, " ", e.state, ", ",
                              e.dir.empty() ? "not dumped: " + e.refused : "dumped to " + e.dir);
        if (ctx_.deps.process_events != nullptr) ctx_.deps.process_events->OnProcessEvent(e);
      }
    });
  }
}

void HangWatch::Started(const Client& c) {
  if (ctx_.deps.process_events == nullptr || c.labels.empty()) return;
  ctx_.deps.process_events->OnProcessEvent(EventOf(c, ProcessEvent::Kind::kStart));
}

HangWatch::Live HangWatch::LiveOf(const Client& holder) {
  Live l;
  l.timeout = TimeoutOf(holder);
  l.watched = l.timeout.count() > 0;
  const ProgressWatch::View v = watch_.Look({holder.peer.pid, holder.start_ticks}, ctx_.deps.clock->Now());
  l.seen = v.known;
  l.never_wrote = v.never_wrote;
  l.last_moved = v.moved;
  l.still_for = v.still;
  l.stalled = l.watched && v.stalled;
  l.busy = l.watched && v.busy;
  l.captured = l.watched && v.captured;
  return l;
}

}  // namespace atraced
