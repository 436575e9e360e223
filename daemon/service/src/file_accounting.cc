#include "file_accounting.h"

#include <algorithm>

namespace atraced {

void FileAccounting::Account(const Client& c, OpenFile& f) {
  if (f.passed) (void)f.file->Refresh();  // a failed fstat keeps the last figures
  const DiskUsage now = f.file->usage();
  const DiskUsage grown = f.accounted.GrowthTo(now);
  if (grown == DiskUsage{}) return;
  ChargeWriter({c.peer.pid, c.start_ticks}, grown.allocated);
  store_.AddBytes(f.seq, grown);
  f.accounted = {std::max(now.allocated, f.accounted.allocated), std::max(now.apparent, f.accounted.apparent)};
}

void FileAccounting::ChargeWriter(const Writer& w, uint64_t allocated) {
  if (ProcessRecord* rec = records_.Find(w.pid, w.start_ticks)) rec->bytes += allocated;
}

void FileAccounting::AccountPassedFiles(ClientTable& clients) {
  for (auto& [id, c] : clients) {
    for (auto& [file_id, f] : c.files) {
      if (f.passed && f.file) Account(c, f);
    }
  }
}

void FileAccounting::RemeasureWatched() {
  const size_t slice = std::min(kRemeasurePerCall, watched_.size());  // each at most once per call
  auto it = watched_.lower_bound(next_);
  for (size_t n = 0; n < slice; ++n) {
    if (it == watched_.end()) it = watched_.begin();
    auto grown = store_.Remeasure(it->first);
    if (!grown) {
      it = watched_.erase(it);  // aged: its bytes left the budget with it
      continue;
    }
    ChargeWriter(it->second, grown->allocated);
    ++it;
  }
  next_ = it == watched_.end() ? 0 : it->first;
}

uint64_t FileAccounting::CloseFile(const Client& c, OpenFile& f) {
  if (!f.file) return f.accounted.apparent;
  Account(c, f);
  if (f.passed) watched_.emplace(f.seq, Writer{c.peer.pid, c.start_ticks});
  const uint64_t length = f.file->size();
  f.file.reset();
  f.charge.Reset();
  return length;
}

}  // namespace atraced
