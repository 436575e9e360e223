#include "atraced/store/remover.h"

#include <pthread.h>
#include <signal.h>

#include <functional>
#include <thread>
#include <utility>

namespace atraced {

Status RemoveEventDir(FileSystem& fs, const RemovalJob& job) {
  Status st = fs.RemoveTree(job.rel_path);
  // rmdir only succeeds on an empty directory, so foreign content and exit dirs keep it; a
  // client that connects meanwhile re-creates it when it next begins an event.
  if (st.ok() && job.remove_parent_if_empty) (void)fs.RemoveEmptyDir(job.process_dir);
  return st;
}

void InlineRemover::Submit(RemovalJob job) {
  Status st = RemoveEventDir(fs_, job);
  done_.push_back({std::move(job), std::move(st)});
}

std::vector<RemovalDone> InlineRemover::TakeFinished() { return std::exchange(done_, {}); }

namespace {

// The remover takes no signal: they belong to the event loop's thread (as io_pool.cc).
std::thread StartWithoutSignals(std::function<void()> run) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  std::thread t(std::move(run));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

}  // namespace

BackgroundRemover::BackgroundRemover(FileSystem& fs) : fs_(fs), thread_(StartWithoutSignals([this] { Run(); })) {}

BackgroundRemover::~BackgroundRemover() {
  stop_requested_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void BackgroundRemover::Submit(RemovalJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() < kMaxQueued) {
      queue_.push_back(std::move(job));
      // Wake the thread only if it sleeps; while it works it takes the whole queue anyway.
      if (sleeping_) wake_.notify_one();
      return;
    }
  }
  // Full: the caller pays for this one, so the backlog stays bounded.
  Status st = RemoveEventDir(fs_, job);
  std::lock_guard<std::mutex> lock(mu_);
  done_.push_back({std::move(job), std::move(st)});
}

std::vector<RemovalDone> BackgroundRemover::TakeFinished() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(done_, {});
}

size_t BackgroundRemover::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + running_ + done_.size();
}

void BackgroundRemover::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

void BackgroundRemover::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<RemovalJob> batch;
  std::vector<RemovalDone> finished;
  for (;;) {
    sleeping_ = true;
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    sleeping_ = false;
    // Stopping: what is still queued was logged as removed, so the next start finishes it;
    // waiting here for a big backlog would only delay the stop.
    if (stop_) return;
    // Linger a moment before taking the queue: under churn that turns one wake-up (two
    // futex calls and two context switches) per aged directory into one per batch. A delete
    // a millisecond later costs nobody anything; the count was settled when it was queued.
    lock.unlock();
    std::this_thread::sleep_for(kLinger);
    lock.lock();
    // Take everything queued at once: one lock round per batch, not per job.
    batch.swap(queue_);
    running_ = batch.size();
    lock.unlock();
    for (RemovalJob& job : batch) {
      Status st = RemoveEventDir(fs_, job);
      finished.push_back({std::move(job), std::move(st)});
      if (stop_requested_.load(std::memory_order_relaxed)) break;
    }
    batch.clear();
    lock.lock();
    running_ = 0;
    for (auto& d : finished) done_.push_back(std::move(d));
    finished.clear();
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace atraced
