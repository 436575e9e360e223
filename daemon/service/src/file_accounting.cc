#include "file_accounting.h"

#include <algorithm>

namespace atraced {

void FileAccounting::Account(const Client& c, OpenFile& f) {
  if (f.passed) (void)f.file->Refresh();  // a failed fstat keeps the last figures
  const DiskUsage now = f.file->usage();
  const DiskUsage grown{now.allocated > f.accounted.allocated ? now.allocated - f.accounted.allocated : 0,
                        now.apparent > f.accounted.apparent ? now.apparent - f.accounted.apparent : 0};
  if (grown == DiskUsage{}) return;
  if (ProcessRecord* rec = records_.Find(c.peer.pid, c.start_ticks)) rec->bytes += grown.allocated;
  store_.AddBytes(f.seq, grown);
  f.accounted = {std::max(now.allocated, f.accounted.allocated), std::max(now.apparent, f.accounted.apparent)};
}

void FileAccounting::AccountPassedFiles(ClientTable& clients) {
  for (auto& [id, c] : clients) {
    for (auto& [file_id, f] : c.files) {
      if (f.passed && f.file) Account(c, f);
    }
  }
}

uint64_t FileAccounting::CloseFile(const Client& c, OpenFile& f) {
  if (!f.file) return f.accounted.apparent;
  Account(c, f);
  const uint64_t length = f.file->size();
  f.file.reset();
  f.charge.Reset();
  return length;
}

}  // namespace atraced
