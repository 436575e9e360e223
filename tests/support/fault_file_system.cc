#include "support/fault_file_system.h"

namespace atraced::testing {
namespace {

Status Injected(int err, const std::string& what) { return Status::Error(err, ErrnoMessage("injected: " + what, err)); }

// A watch on such a file: its usage is the faked one while FakeUsage stands.
class FaultFileWatch final : public FileWatch {
 public:
  FaultFileWatch(FaultFileSystem& fs, std::unique_ptr<FileWatch> base, std::string rel)
      : fs_(fs), base_(std::move(base)), rel_(std::move(rel)) {}
  Result<DiskUsage> Usage() override {
    if (int e = fs_.Check(FsOp::kRefresh, rel_)) return Injected(e, "stat " + rel_);
    if (auto faked = fs_.FakedUsage(rel_)) return *faked;
    return base_->Usage();
  }
  bool OpenForWriting() override { return base_->OpenForWriting(); }

 private:
  FaultFileSystem& fs_;
  std::unique_ptr<FileWatch> base_;
  std::string rel_;
};

// The file a FaultFileSystem hands out: appends, refreshes and dups go through the rules.
class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultFileSystem& fs, std::unique_ptr<WritableFile> base, std::string rel)
      : fs_(fs), base_(std::move(base)), rel_(std::move(rel)) {}
  Status Append(std::span<const uint8_t> data) override {
    if (int e = fs_.Check(FsOp::kAppend, rel_)) return Injected(e, "write " + rel_);
    Status st = base_->Append(data);
    if (st.ok()) fs_.Consumed(data.size());
    return st;
  }
  DiskUsage usage() const override { return faked_ ? *faked_ : base_->usage(); }
  Result<DiskUsage> Refresh() override {
    if (int e = fs_.Check(FsOp::kRefresh, rel_)) return Injected(e, "stat " + rel_);
    faked_ = fs_.FakedUsage(rel_);
    if (faked_) return *faked_;
    return base_->Refresh();
  }
  Result<UniqueFd> Dup() override {
    if (int e = fs_.Check(FsOp::kDup, rel_)) return Injected(e, "dup " + rel_);
    return base_->Dup();
  }
  Result<std::unique_ptr<FileWatch>> Watch() override {
    auto base = base_->Watch();
    if (!base.ok()) return base.status();
    return std::unique_ptr<FileWatch>(new FaultFileWatch(fs_, std::move(*base), rel_));
  }

 private:
  FaultFileSystem& fs_;
  std::unique_ptr<WritableFile> base_;
  std::string rel_;
  std::optional<DiskUsage> faked_;  // from FakeUsage, as of the last Refresh
};

}  // namespace

int FaultFileSystem::Check(FsOp op, const std::string& path) {
  ++calls_[static_cast<size_t>(op)];
  std::function<void()> action;
  int err = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& r : rules_) {
      if (r.op != op || r.times == 0 || path.find(r.path_part) == std::string::npos) continue;
      if (r.times > 0) --r.times;
      if (r.action) {
        action = r.action;
        break;
      }
      err = r.err;
      break;
    }
  }
  if (action) action();  // outside the lock: it may touch the filesystem
  return err;
}

int FaultFileSystem::total_calls() const {
  int n = 0;
  for (const auto& c : calls_) n += c.load();
  return n;
}

void FaultFileSystem::ResetCalls() {
  for (auto& c : calls_) c = 0;
}

Status FaultFileSystem::MakeDir(const std::string& rel) {
  if (int e = Check(FsOp::kMakeDir, rel)) return Injected(e, "mkdir " + rel);
  return base_.MakeDir(rel);
}
Result<std::vector<DirEntry>> FaultFileSystem::ListDir(const std::string& rel) {
  if (int e = Check(FsOp::kListDir, rel)) return Injected(e, "list " + rel);
  return base_.ListDir(rel);
}
Result<std::unique_ptr<WritableFile>> FaultFileSystem::OpenAppend(const std::string& rel) {
  if (int e = Check(FsOp::kOpenAppend, rel)) return Injected(e, "open " + rel);
  auto f = base_.OpenAppend(rel);
  if (!f.ok()) return f.status();
  return std::unique_ptr<WritableFile>(new FaultWritableFile(*this, std::move(*f), rel));
}
Result<std::string> FaultFileSystem::ReadFile(const std::string& rel, size_t max_bytes) {
  if (int e = Check(FsOp::kReadFile, rel)) return Injected(e, "read " + rel);
  return base_.ReadFile(rel, max_bytes);
}
Status FaultFileSystem::ReplaceFile(const std::string& rel, std::span<const uint8_t> data) {
  if (int e = Check(FsOp::kReplaceFile, rel)) return Injected(e, "replace " + rel);
  return base_.ReplaceFile(rel, data);
}
uint64_t FaultFileSystem::FakeBytesOf(const std::string& rel) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!fake_space_) return 0;
  }
  auto bytes = base_.TreeBytes(rel);
  return bytes.ok() ? bytes->apparent : 0;  // what Consumed took: the bytes appended
}
void FaultFileSystem::FakeFreed(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fake_space_) fake_space_->available = std::min(fake_space_->total, fake_space_->available + bytes);
}
Status FaultFileSystem::RemoveTree(const std::string& rel) {
  if (int e = Check(FsOp::kRemoveTree, rel)) return Injected(e, "remove " + rel);
  const uint64_t freed = FakeBytesOf(rel);
  Status st = base_.RemoveTree(rel);
  if (st.ok()) FakeFreed(freed);
  return st;
}
Result<bool> FaultFileSystem::RemoveSmallDir(const std::string& rel, size_t max_entries) {
  if (int e = Check(FsOp::kRemoveSmallDir, rel)) return Injected(e, "remove " + rel);
  const uint64_t freed = FakeBytesOf(rel);
  auto removed = base_.RemoveSmallDir(rel, max_entries);
  if (removed.ok() && *removed) FakeFreed(freed);
  return removed;
}
Status FaultFileSystem::RemoveEmptyDir(const std::string& rel) {
  if (int e = Check(FsOp::kRemoveEmptyDir, rel)) return Injected(e, "rmdir " + rel);
  return base_.RemoveEmptyDir(rel);
}
Status FaultFileSystem::RemoveFile(const std::string& rel) {
  if (int e = Check(FsOp::kRemoveFile, rel)) return Injected(e, "unlink " + rel);
  return base_.RemoveFile(rel);
}
Status FaultFileSystem::Rename(const std::string& from, const std::string& to) {
  if (int e = Check(FsOp::kRename, from)) return Injected(e, "rename " + from + " to " + to);
  return base_.Rename(from, to);
}
Result<FsSpace> FaultFileSystem::Space() {
  if (int e = Check(FsOp::kSpace, "")) return Injected(e, "statvfs");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fake_space_) return *fake_space_;
  }
  return base_.Space();
}
Result<DiskUsage> FaultFileSystem::TreeBytes(const std::string& rel) {
  if (int e = Check(FsOp::kTreeBytes, rel)) return Injected(e, "du " + rel);
  if (auto faked = FakedUsage(rel)) return *faked;
  return base_.TreeBytes(rel);
}

}  // namespace atraced::testing
