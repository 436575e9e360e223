#include "file_accounting.h"

#include <algorithm>
#include <iterator>

namespace atraced {

void FileAccounting::Grew(const Writer& w, uint64_t seq, DiskUsage now, DiskUsage& accounted) {
  const DiskUsage grown = accounted.GrowthTo(now);
  if (grown == DiskUsage{}) return;
  ChargeWriter(w, grown.allocated);
  store_.AddHeldBytes(seq, w.uid, grown);
  accounted = {std::max(now.allocated, accounted.allocated), std::max(now.apparent, accounted.apparent)};
}

void FileAccounting::Account(const Client& c, OpenFile& f) {
  if (f.passed) {
    (void)f.file->Refresh();  // a failed fstat keeps the last figures
    return Grew({c.peer.pid, c.start_ticks, c.peer.uid}, f.seq, f.file->usage(), f.accounted);
  }
  const DiskUsage now = f.file->usage();
  const DiskUsage grown = f.accounted.GrowthTo(now);
  if (grown == DiskUsage{}) return;
  ChargeWriter({c.peer.pid, c.start_ticks, c.peer.uid}, grown.allocated);
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
  if (next_ >= watched_.size()) next_ = 0;
  auto it = std::next(watched_.begin(), static_cast<std::ptrdiff_t>(next_));
  for (size_t n = 0; n < slice; ++n) {
    if (it == watched_.end()) {
      it = watched_.begin();
      next_ = 0;
    }
    // Measured before asked: what was written up to the last close is counted, then released.
    if (auto now = it->watch->Usage(); now.ok()) Grew(it->writer, it->seq, *now, it->accounted);
    if (it->watch->OpenForWriting()) {
      ++it;
      ++next_;
      continue;
    }
    store_.ReleaseHeld(it->seq, it->writer.uid, it->accounted.allocated);
    it = watched_.erase(it);  // closes the watch: an unlinked file's blocks are freed now
  }
}

uint64_t FileAccounting::CloseFile(const Client& c, OpenFile& f) {
  if (!f.file) return f.accounted.apparent;
  Account(c, f);
  if (f.passed) {
    auto watch = f.file->Watch();
    if (watch.ok()) {
      watched_.push_back({f.seq, {c.peer.pid, c.start_ticks, c.peer.uid}, std::move(*watch), f.accounted});
    } else {
      store_.ReleaseHeld(f.seq, c.peer.uid, f.accounted.allocated);  // cannot be followed: counted as it is
    }
  }
  const uint64_t length = f.file->size();
  f.file.reset();
  f.charge.Reset();
  return length;
}

}  // namespace atraced
