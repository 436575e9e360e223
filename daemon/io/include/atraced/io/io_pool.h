// The daemon's I/O workers (docs/IO_WORKERS.md): a fixed set of threads that run the file
// work the event loop decided, off the loop, so one user's 100 MB save stalls neither the
// loop nor another user's job.
//
// Fairness: one queue per uid, served round robin: a uid with a thousand queued saves gets
// one worker turn, then every other uid with work gets one. The bound on what one uid may
// queue is the loop's (a UidShare of queued save bytes); the pool only orders.
//
// Threading: Submit is called on the event loop; a worker pops under the queue's mutex, runs
// the job without it, and hands `done` to `post_to_loop` (Asio's post in the daemon). The
// mutex guards only pushes and pops: the loop never waits behind a job's I/O.
//
// Shutdown: the destructor stops taking jobs, lets the workers run what is queued until
// `drain_deadline`, drops the rest, and joins. Their `done` are posted as usual; a loop that
// no longer runs never calls them. The daemon answers its saves before that (RingSaver's
// DropQueued, AbandonRunning): a job it dropped is still popped here, and does nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "atraced/io/job_runner.h"

namespace atraced {

class IoPool final : public JobRunner {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // `thread_name` (at most 15 bytes) names each worker (/proc/<pid>/task/<tid>/comm), so
  // `top -H` and a debugger (and the shutdown tests, which hold a worker) tell them apart.
  IoPool(size_t workers, Post post_to_loop, std::chrono::milliseconds drain_deadline = std::chrono::seconds(5),
         const char* thread_name = kThreadName);
  ~IoPool() override;
  IoPool(const IoPool&) = delete;
  IoPool& operator=(const IoPool&) = delete;

  void Submit(uint32_t uid, std::function<void()> work, std::function<void()> done) override;

  // Jobs queued or running whose `done` is not posted yet (any thread; a moment's figure).
  size_t in_flight() const;
  size_t workers() const { return threads_.size(); }
  // The save workers' thread name (the default).
  static constexpr const char* kThreadName = "atraced-io";

  // io-workers = auto: the CPUs this process may run on minus one for the loop, 2 to 16.
  // At least two even on one or two CPUs: with one, one user's long save (hundreds of MB of
  // rings) holds every other user's saves until it ends, and on two CPUs a second worker
  // shortens a report storm (BENCHMARKS.md).
  static size_t AutoWorkers();

 private:
  struct Job {
    std::function<void()> work;
    std::function<void()> done;
  };
  void Loop(const char* thread_name);
  // Takes the next job, round robin over uids with work. Call with mu_ held and work queued.
  Job PopFair();

  Post post_;
  const std::chrono::milliseconds drain_deadline_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<uint32_t, std::deque<Job>> by_uid_;
  std::deque<uint32_t> turns_;  // uids with queued jobs, in the order they are served
  size_t queued_ = 0;
  size_t running_ = 0;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point drop_after_{};
  std::vector<std::thread> threads_;  // last: started once the members above exist
};

}  // namespace atraced
