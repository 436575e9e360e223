#include "atraced/io/io_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <utility>

namespace atraced {

IoPool::IoPool(size_t workers, Post post_to_loop, std::chrono::milliseconds drain_deadline, const char* thread_name)
    : post_(std::move(post_to_loop)), drain_deadline_(drain_deadline) {
  threads_.reserve(std::max<size_t>(workers, 1));
  // Workers take no signal: SIGTERM and SIGHUP belong to the event loop's thread, and a
  // signal the kernel hands to a worker waiting for a job would wait with it (the threads
  // inherit the mask they are created with).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i) threads_.emplace_back([this, thread_name] { Loop(thread_name); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

IoPool::~IoPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    drop_after_ = std::chrono::steady_clock::now() + drain_deadline_;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void IoPool::Submit(uint32_t uid, std::function<void()> work, std::function<void()> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<Job>& q = by_uid_[uid];
    if (q.empty()) turns_.push_back(uid);
    q.push_back({std::move(work), std::move(done)});
    ++queued_;
  }
  wake_.notify_one();
}

size_t IoPool::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_ + running_;
}

size_t IoPool::AutoWorkers() {
  cpu_set_t set;
  CPU_ZERO(&set);
  size_t cpus = 1;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) cpus = static_cast<size_t>(CPU_COUNT(&set));
  return std::clamp<size_t>(cpus > 1 ? cpus - 1 : 1, 2, 16);
}

IoPool::Job IoPool::PopFair() {
  const uint32_t uid = turns_.front();
  turns_.pop_front();
  auto it = by_uid_.find(uid);
  Job job = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) {
    by_uid_.erase(it);
  } else {
    turns_.push_back(uid);  // its next job waits for every other uid's turn
  }
  --queued_;
  return job;
}

void IoPool::Loop(const char* thread_name) {
  ::pthread_setname_np(::pthread_self(), thread_name);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || queued_ > 0; });
    if (queued_ == 0) return;  // stopping, and nothing left
    if (stopping_ && std::chrono::steady_clock::now() >= drop_after_) {
      // Past the drain deadline: the rest is dropped (their event dirs stay as far as
      // written; the next start recovers them from the order log).
      by_uid_.clear();
      turns_.clear();
      queued_ = 0;
      return;
    }
    Job job = PopFair();
    ++running_;
    lock.unlock();
    job.work();
    lock.lock();
    --running_;  // before the post: once `done` can run, the job is not in flight any more
    lock.unlock();
    post_(std::move(job.done));
    lock.lock();
  }
}

}  // namespace atraced
