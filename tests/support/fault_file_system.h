// A FileSystem wrapper that fails chosen operations on chosen paths (LevelDB's
// FaultInjectionTestEnv), over a real one. Each rule fires `times` times (or forever).
// It also counts calls per operation, which is how tests bound the work of an event.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <algorithm>
#include <string>
#include <vector>

#include "atraced/store/file_system.h"

namespace atraced::testing {

enum class FsOp {
  kMakeDir, kListDir, kOpenAppend, kAppend, kReadFile, kReplaceFile, kRemoveTree, kRemoveEmptyDir, kRemoveFile, kTreeBytes,
  kRename, kRemoveSmallDir, kRefresh, kDup, kSpace, kCount
};

class FaultFileSystem final : public FileSystem {
 public:
  explicit FaultFileSystem(FileSystem& base) : base_(base) {}

  // Fails `op` on any path containing `path_part` with `err`. times < 0: always.
  void Fail(FsOp op, std::string path_part, int err, int times = -1) {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.push_back({op, std::move(path_part), err, times, nullptr});
  }
  // Runs `action` before `op` on a matching path reaches the real filesystem (once).
  void Before(FsOp op, std::string path_part, std::function<void()> action) {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.push_back({op, std::move(path_part), 0, 1, std::move(action)});
  }
  // Makes the file or tree at exactly `rel` report `usage` (a sparse file, say) from
  // Refresh and TreeBytes instead of what the disk says; it stands until the file's next
  // Refresh, whatever Append writes meanwhile.
  void FakeUsage(std::string rel, DiskUsage usage) {
    std::lock_guard<std::mutex> lock(mu_);
    fake_usage_[std::move(rel)] = usage;
  }
  std::optional<DiskUsage> FakedUsage(const std::string& rel) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = fake_usage_.find(rel);
    if (it == fake_usage_.end()) return std::nullopt;
    return it->second;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    rules_.clear();
    fake_usage_.clear();
  }
  // Makes Space() report these figures instead of the real file system's; `available` then
  // shrinks by what is appended through this wrapper and grows by what RemoveTree frees
  // (as TreeBytes measured it just before), so a test can fill a fake disk through the store.
  // Measuring calls TreeBytes from the remover's thread: use it with the InlineRemover.
  void FakeSpace(uint64_t total, uint64_t available) {
    std::lock_guard<std::mutex> lock(mu_);
    fake_space_ = FsSpace{total, available};
  }
  // Sets the fake free space (after FakeSpace), as if someone else filled or freed the disk.
  void SetAvailable(uint64_t available) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fake_space_) fake_space_->available = available;
  }
  // Called by the file wrapper after a successful append of `bytes`.
  void Consumed(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fake_space_) fake_space_->available -= std::min(bytes, fake_space_->available);
  }
  int calls(FsOp op) const { return calls_[static_cast<size_t>(op)].load(); }
  // Calls of every operation so far.
  int total_calls() const;
  void ResetCalls();

  const std::string& trace_dir() const override { return base_.trace_dir(); }
  Status MakeDir(const std::string& rel) override;
  Result<std::vector<DirEntry>> ListDir(const std::string& rel) override;
  Result<std::unique_ptr<WritableFile>> OpenAppend(const std::string& rel) override;
  Result<std::string> ReadFile(const std::string& rel, size_t max_bytes) override;
  Status ReplaceFile(const std::string& rel, std::span<const uint8_t> data) override;
  Status RemoveTree(const std::string& rel) override;
  Result<bool> RemoveSmallDir(const std::string& rel, size_t max_entries) override;
  Status RemoveEmptyDir(const std::string& rel) override;
  Status RemoveFile(const std::string& rel) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Result<DiskUsage> TreeBytes(const std::string& rel) override;
  Result<FsSpace> Space() override;
  // Read grants are passed through, never faulted.
  Status GrantRead(const std::string& process_dir, uint32_t uid) override { return base_.GrantRead(process_dir, uid); }
  Result<bool> RepairGrant(const std::string& process_dir, uint32_t uid) override {
    return base_.RepairGrant(process_dir, uid);
  }
  std::string GrantStamp() const override { return base_.GrantStamp(); }
  Result<bool> RecheckGrant(const std::string& process_dir, uint32_t uid) override {
    return base_.RecheckGrant(process_dir, uid);
  }

  // Returns the errno to inject, or 0 to pass through (used by the file wrapper too).
  int Check(FsOp op, const std::string& path);

 private:
  struct Rule {
    FsOp op;
    std::string path_part;
    int err;
    int times;
    std::function<void()> action;
  };

  FileSystem& base_;
  // With FakeSpace: what removing `rel` will give back (the bytes appended), and giving it.
  uint64_t FakeBytesOf(const std::string& rel);
  void FakeFreed(uint64_t bytes);

  std::mutex mu_;  // the remover thread calls RemoveTree beside the test's thread
  std::vector<Rule> rules_;
  std::optional<FsSpace> fake_space_;
  std::map<std::string, DiskUsage> fake_usage_;
  std::atomic<int> calls_[static_cast<size_t>(FsOp::kCount)] = {};
};

}  // namespace atraced::testing
