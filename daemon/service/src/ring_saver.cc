#include "ring_saver.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace atraced {

// One save, built on the loop; Run on a worker touches only what it holds.
struct RingSaver::Job {
  struct Part {
    explicit Part(TraceFileName n) : name(std::move(n)) {}
    TraceFileName name;
    std::optional<RingSavePlan> ring;  // a ring's part; else `bytes` is the report
    std::string bytes;
    std::unique_ptr<WritableFile> file;  // opened on the loop; closed by Run
    Status status;                       // the open's or the write's failure
    uint64_t written = 0;
    bool empty = false;  // no record of the ring checked out: the file is removed
    std::vector<std::string> problems;
    std::string ring_name;  // for the log
  };

  // Who has the job: the worker and the loop each claim it with one compare-and-swap, so a
  // save dropped at shutdown is never also written, and one being written is not dropped.
  enum class State : uint8_t { kQueued, kRunning, kRan, kDropped };

  // Worker side: copies and formats each ring, writes each file, closes them; nothing if the
  // loop dropped the job first.
  void Run() {
    State expected = State::kQueued;
    if (!state.compare_exchange_strong(expected, State::kRunning)) return;
    for (Part& p : parts) {
      if (!p.file) continue;
      if (p.ring) p.bytes = p.ring->Format(&p.problems);
      if (p.bytes.empty()) {
        p.empty = true;
      } else if (Status st = p.file->Append({reinterpret_cast<const uint8_t*>(p.bytes.data()), p.bytes.size()});
                 st.ok()) {
        p.written = p.bytes.size();
      } else {
        p.status = st;
      }
      p.file.reset();
      std::string().swap(p.bytes);
    }
    state.store(State::kRan);
  }

  // Every part opened and written in full.
  bool Whole() const {
    for (const Part& p : parts) {
      if (!p.status.ok()) return false;
    }
    return true;
  }

  std::vector<Part> parts;
  uint64_t seq = 0;
  int32_t pid = 0;
  SaveReservation reservation;  // loop side: settled by Complete or Answer
  SaveDone done;
  std::atomic<State> state{State::kQueued};
  bool answered = false;  // loop side: `done` was called (a completion after it does nothing)
};

void RingSaver::Save(const Client& c, const Client& payer, EventKind kind, const std::vector<const HeldRing*>& rings,
                     std::vector<HeldRing::File> reports, SaveDone done, std::string* made_dir, DumpKind dump) {
  // Planned from the headers: an event directory is made only when some ring holds a record.
  auto job = std::make_shared<Job>();
  uint64_t bound = 0;
  for (HeldRing::File& report : reports) {
    bound += report.bytes.size();
    job->parts.emplace_back(report.name).bytes = std::move(report.bytes);
  }
  for (const HeldRing* ring : WithLedger(c, rings)) {
    std::vector<std::string> problems;
    std::optional<RingSavePlan> plan = ring->PlanSave(&problems);
    for (const auto& p : problems) log_.Warning("ring ", ring->name(), " of pid ", c.peer.pid, ": ", p);
    if (!plan) continue;
    bound += plan->max_bytes();
    Job::Part& part = job->parts.emplace_back(plan->file_name());
    part.ring = std::move(plan);
    part.ring_name = ring->name();
  }
  if (job->parts.empty()) return done(Status::Ok());
  std::optional<ProcessDirName> process = ParseProcessDirName(c.process_dir);
  if (!process) return done(Status::Error(EINVAL, "process: malformed process directory " + c.process_dir));
  // The most the files can take is reserved against every bound before anything is made;
  // the completion gives back what was not written (save_reservation.h).
  if (Status refused = SaveReservation::Take(admission_, queued_, payer, kind, bound, &job->reservation); !refused.ok()) {
    return done(std::move(refused));
  }
  // Room for all of it first: a stackcore dir with half its rings would mislead.
  if (Status st = store_.MakeRoom(0, bound, c.peer.uid); !st.ok()) return done(std::move(st).LoggedAs(Status::LogAs::kSummarized));
  auto begun = store_.BeginEvent({*process, kind, c.peer.pid, "", Side::kHost, 0, c.peer.uid, c.program, /*save=*/true, c.labels,
                                  dump},
                                 c.utc_offset_s);
  if (!begun.ok()) return done(begun.status());
  job->seq = begun->seq;
  if (made_dir != nullptr) *made_dir = store_.fs().trace_dir() + "/" + begun->rel_path;
  job->pid = c.peer.pid;
  job->done = std::move(done);
  job->reservation.HoldInStore(store_);
  for (Job::Part& p : job->parts) {
    auto out = store_.OpenFile(job->seq, p.name);
    if (out.ok()) {
      p.file = std::move(*out);
    } else {
      p.status = out.status();
    }
  }
  jobs_.emplace(job.get(), job);
  deps_.io_runner->Submit(c.peer.uid, [job] { job->Run(); }, [this, job] { Complete(*job); });
}

RingSaver::~RingSaver() {
  // Saves a worker may still hold (the service is going): what they reserved goes back now,
  // while the pools it came from are still there.
  for (auto& [raw, job] : jobs_) job->reservation.Settle(0);
}

size_t RingSaver::DropQueued() {
  std::vector<Job*> dropped;
  for (auto& [raw, job] : jobs_) {
    Job::State expected = Job::State::kQueued;
    if (job->state.compare_exchange_strong(expected, Job::State::kDropped)) dropped.push_back(raw);
  }
  for (Job* job : dropped) Answer(*job, /*parts_idle=*/true);
  return dropped.size();
}

size_t RingSaver::AbandonRunning() {
  std::vector<Job*> running;
  for (auto& [raw, job] : jobs_) {
    if (job->state.load() == Job::State::kRunning) running.push_back(raw);
  }
  for (Job* job : running) Answer(*job, /*parts_idle=*/false);
  return running.size();
}

void RingSaver::Answer(Job& job, bool parts_idle) {
  const std::shared_ptr<Job> keep = jobs_.at(&job);  // the worker's copy may be all that is left
  jobs_.erase(&job);
  job.answered = true;
  job.reservation.Settle(0);
  if (parts_idle) {
    for (Job::Part& p : job.parts) p.file.reset();  // the files stay, empty: the directory is incomplete
  }
  store_.EndSave(job.seq, false);
  store_.EndEvent(job.seq);
  SaveDone done = std::move(job.done);
  done(Status::Error(ESHUTDOWN, "save: the daemon is stopping; the save was not written in full"));
}

void RingSaver::Complete(Job& job) {
  if (job.answered) return;  // answered -ESHUTDOWN at shutdown
  jobs_.erase(&job);
  uint64_t written = 0;
  for (const Job::Part& p : job.parts) {
    if (p.status.ok()) written += p.written;
  }
  job.reservation.Settle(written);  // before the bytes written are added: counted once
  Status result;
  for (Job::Part& p : job.parts) {
    for (const auto& problem : p.problems) log_.Warning("ring ", p.ring_name, " of pid ", job.pid, ": ", problem);
    if (p.empty) (void)store_.RemoveFile(job.seq, p.name);  // CANN writes no file without a record
    if (!p.status.ok()) {
      if (result.ok()) result = p.status;  // the first failure
      continue;
    }
    if (p.written == 0) continue;
    store_.AddBytes(job.seq, p.written);
    if (p.ring) ++counters_.rings_saved;
  }
  store_.EndSave(job.seq, job.Whole());
  store_.EndEvent(job.seq);
  SaveDone done = std::move(job.done);
  done(std::move(result));
}

std::vector<const HeldRing*> RingSaver::Unreleased(const Client& c) {
  std::vector<const HeldRing*> chosen;
  for (auto& [id, held] : c.rings) {
    if (!c.released.count(id) && !held.ring.ledger()) chosen.push_back(&held.ring);
  }
  return chosen;
}

std::vector<const HeldRing*> RingSaver::WithLedger(const Client& c, std::vector<const HeldRing*> rings) {
  for (auto& [id, held] : c.rings) {
    if (held.ring.ledger()) rings.push_back(&held.ring);
  }
  return rings;
}

namespace {

// One ring per object name among `c`'s rings that `wanted` accepts: a live one over a
// released one; of live ones the highest id (the newest), of released ones the last
// released. Sorted by name. `names`, if given, lists them for a report.
template <typename Wanted>
std::vector<const HeldRing*> OnePerName(const Client& c, Wanted wanted, std::string* names) {
  // The rank of a candidate: live rings above every released one.
  auto rank = [&](uint32_t id) -> std::pair<int, uint64_t> {
    const auto r = c.released.find(id);
    return r == c.released.end() ? std::pair<int, uint64_t>{1, id} : std::pair<int, uint64_t>{0, r->second};
  };
  std::map<std::string, uint32_t> by_name;
  for (auto& [id, held] : c.rings) {
    if (held.ring.ledger() || !wanted(held.ring)) continue;  // the ledger joins every save (Save)
    auto [pos, inserted] = by_name.try_emplace(held.ring.name(), id);
    if (!inserted && rank(id) > rank(pos->second)) pos->second = id;
  }
  std::vector<const HeldRing*> chosen;
  for (auto& [name, id] : by_name) {
    chosen.push_back(&c.rings.at(id).ring);
    if (names) *names += (names->empty() ? "" : ", ") + name + (c.released.count(id) ? " (destroyed, exitSave)" : "");
  }
  return chosen;
}

}  // namespace

std::vector<const HeldRing*> RingSaver::AtExit(const Client& c) {
  return OnePerName(c, [](const HeldRing& r) { return r.exit_save(); }, nullptr);
}

std::vector<const HeldRing*> RingSaver::AtDeath(const Client& c, std::string* names) {
  return OnePerName(c, [](const HeldRing&) { return true; }, names);
}

}  // namespace atraced
