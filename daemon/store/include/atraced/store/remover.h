// Removal of aged event directories, off the reply's path.
//
// Aging decides synchronously: the store takes a directory off its lists (so the count
// invariant holds the moment the new one exists) and writes its '-' record to the order log
// (order_log.h). Only then is the recursive delete handed to a Remover (unless the directory
// is as small as an event's few files: the store deletes those itself, TraceStore::RemoveNow,
// as CANN's writer does before its save returns). The background one
// runs deletes on its own thread from a bounded queue, so a directory of 20,000 files delays
// no client; if the queue is full, the caller does the delete itself (backpressure, never an
// unbounded backlog). What a crash interrupts is finished at the next start-up, because the
// '-' record is already in the log.
//
// The owner collects finished jobs with TakeFinished() on its own thread; that is where
// failures are counted, logged and queued for a retry.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "atraced/store/file_system.h"

namespace atraced {

struct RemovalJob {
  uint64_t seq = 0;
  std::string rel_path;         // the event directory
  std::string process_dir;      // its parent
  bool remove_parent_if_empty = false;  // no live client holds the process dir
  uint64_t bytes = 0;           // what the store knew it held, for the report
};

struct RemovalDone {
  RemovalJob job;
  Status status;
};

class Remover {
 public:
  virtual ~Remover() = default;
  virtual void Submit(RemovalJob job) = 0;
  // Jobs finished since the last call, in completion order.
  virtual std::vector<RemovalDone> TakeFinished() = 0;
  // Jobs submitted and not yet taken back.
  virtual size_t outstanding() const = 0;
  // Blocks until every submitted job has finished.
  virtual void Drain() = 0;
};

// Does the work inside Submit (unit tests, and where a thread is not wanted).
class InlineRemover final : public Remover {
 public:
  explicit InlineRemover(FileSystem& fs) : fs_(fs) {}
  void Submit(RemovalJob job) override;
  std::vector<RemovalDone> TakeFinished() override;
  size_t outstanding() const override { return done_.size(); }
  void Drain() override {}

 private:
  FileSystem& fs_;
  std::vector<RemovalDone> done_;
};

class BackgroundRemover final : public Remover {
 public:
  static constexpr size_t kMaxQueued = 4096;
  static constexpr std::chrono::milliseconds kLinger{2};

  explicit BackgroundRemover(FileSystem& fs);
  ~BackgroundRemover() override;  // finishes the running delete, leaves the queue to the next start

  void Submit(RemovalJob job) override;
  std::vector<RemovalDone> TakeFinished() override;
  size_t outstanding() const override;
  void Drain() override;

 private:
  void Run();

  FileSystem& fs_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<RemovalJob> queue_;
  std::vector<RemovalDone> done_;
  size_t running_ = 0;       // jobs taken by the thread and not yet reported
  bool sleeping_ = false;    // the thread waits for work
  bool stop_ = false;
  std::atomic<bool> stop_requested_{false};  // read between jobs without the lock
  std::thread thread_;
};

// The delete itself, shared by both: the tree, then the parent if it is left empty.
Status RemoveEventDir(FileSystem& fs, const RemovalJob& job);

}  // namespace atraced
