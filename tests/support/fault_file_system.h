// A FileSystem wrapper that fails chosen operations on chosen paths (LevelDB's
// FaultInjectionTestEnv), over a real one. Each rule fires `times` times (or forever).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "atraced/core/file_system.h"

namespace atraced::testing {

enum class FsOp { kMakeDir, kListDir, kCreateEmptyFile, kOpenAppend, kWrite, kRename, kRemoveTree, kRemoveEmptyDir, kTreeBytes };

class FaultFileSystem final : public FileSystem {
 public:
  explicit FaultFileSystem(FileSystem& base) : base_(base) {}

  // Fails `op` on any path containing `path_part` with `err`. times < 0: always.
  void Fail(FsOp op, std::string path_part, int err, int times = -1) {
    rules_.push_back({op, std::move(path_part), err, times, nullptr});
  }
  // Runs `action` before `op` on a matching path reaches the real filesystem (once).
  void Before(FsOp op, std::string path_part, std::function<void()> action) {
    rules_.push_back({op, std::move(path_part), 0, 1, std::move(action)});
  }
  void Clear() { rules_.clear(); }
  int calls(FsOp op) const { return calls_[static_cast<size_t>(op)]; }

  const std::string& trace_dir() const override { return base_.trace_dir(); }
  Status MakeDir(const std::string& rel) override;
  Result<std::vector<DirEntry>> ListDir(const std::string& rel) override;
  Status CreateEmptyFile(const std::string& rel) override;
  Result<UniqueFd> OpenAppend(const std::string& rel) override;
  Status Write(int fd, std::span<const uint8_t> data) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status RemoveTree(const std::string& rel) override;
  Status RemoveEmptyDir(const std::string& rel) override;
  Result<uint64_t> TreeBytes(const std::string& rel) override;

 private:
  struct Rule {
    FsOp op;
    std::string path_part;
    int err;
    int times;
    std::function<void()> action;
  };
  // Returns the errno to inject, or 0 to pass through.
  int Check(FsOp op, const std::string& path);

  FileSystem& base_;
  std::vector<Rule> rules_;
  int calls_[9] = {};
};

}  // namespace atraced::testing
