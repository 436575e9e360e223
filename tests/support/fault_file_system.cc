#include "support/fault_file_system.h"

namespace atraced::testing {

int FaultFileSystem::Check(FsOp op, const std::string& path) {
  ++calls_[static_cast<size_t>(op)];
  for (auto& r : rules_) {
    if (r.op != op || r.times == 0 || path.find(r.path_part) == std::string::npos) continue;
    if (r.times > 0) --r.times;
    if (r.action) {
      r.action();
      continue;
    }
    return r.err;
  }
  return 0;
}

static Status Injected(int err, const std::string& what) {
  return Status::Error(err, ErrnoMessage("injected: " + what, err));
}

Status FaultFileSystem::MakeDir(const std::string& rel) {
  if (int e = Check(FsOp::kMakeDir, rel)) return Injected(e, "mkdir " + rel);
  return base_.MakeDir(rel);
}
Result<std::vector<DirEntry>> FaultFileSystem::ListDir(const std::string& rel) {
  if (int e = Check(FsOp::kListDir, rel)) return Injected(e, "list " + rel);
  return base_.ListDir(rel);
}
Status FaultFileSystem::CreateEmptyFile(const std::string& rel) {
  if (int e = Check(FsOp::kCreateEmptyFile, rel)) return Injected(e, "create " + rel);
  return base_.CreateEmptyFile(rel);
}
Result<UniqueFd> FaultFileSystem::OpenAppend(const std::string& rel) {
  if (int e = Check(FsOp::kOpenAppend, rel)) return Injected(e, "open " + rel);
  return base_.OpenAppend(rel);
}
Status FaultFileSystem::Write(int fd, std::span<const uint8_t> data) {
  if (int e = Check(FsOp::kWrite, "")) return Injected(e, "write");
  return base_.Write(fd, data);
}
Status FaultFileSystem::Rename(const std::string& from, const std::string& to) {
  if (int e = Check(FsOp::kRename, from + " -> " + to)) return Injected(e, "rename " + from);
  return base_.Rename(from, to);
}
Status FaultFileSystem::RemoveTree(const std::string& rel) {
  if (int e = Check(FsOp::kRemoveTree, rel)) return Injected(e, "remove " + rel);
  return base_.RemoveTree(rel);
}
Status FaultFileSystem::RemoveEmptyDir(const std::string& rel) {
  if (int e = Check(FsOp::kRemoveEmptyDir, rel)) return Injected(e, "rmdir " + rel);
  return base_.RemoveEmptyDir(rel);
}
Result<uint64_t> FaultFileSystem::TreeBytes(const std::string& rel) {
  if (int e = Check(FsOp::kTreeBytes, rel)) return Injected(e, "du " + rel);
  return base_.TreeBytes(rel);
}

}  // namespace atraced::testing
