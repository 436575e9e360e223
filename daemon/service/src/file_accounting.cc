#include "file_accounting.h"

#include <algorithm>

namespace atraced {

void FileAccounting::Grew(const Writer& w, uint64_t seq, DiskUsage now, DiskUsage& accounted, bool held) {
  const DiskUsage grown = accounted.GrowthTo(now);
  if (grown == DiskUsage{}) return;
  ChargeWriter(w, grown.allocated);
  if (held) {
    store_.AddHeldBytes(seq, w.uid, grown);
  } else {
    store_.AddBytes(seq, grown);
  }
  accounted = {std::max(now.allocated, accounted.allocated), std::max(now.apparent, accounted.apparent)};
}

void FileAccounting::Account(const Client& c, OpenFile& f) {
  if (f.passed) (void)f.file->Refresh();  // a failed fstat keeps the last figures
  Grew({c.peer.pid, c.start_ticks, c.peer.uid}, f.seq, f.file->usage(), f.accounted, f.passed);
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
  // Round robin: each call takes a slice from the front; what is still written goes to the back.
  const size_t slice = std::min(kRemeasurePerCall, watched_.size());  // each at most once per call
  for (size_t n = 0; n < slice; ++n) {
    Watched w = std::move(watched_.front());
    watched_.pop_front();
    // Measured before asked: what was written up to the last close is counted, then released.
    if (auto now = w.watch->Usage(); now.ok()) Grew(w.writer, w.seq, *now, w.accounted, true);
    if (w.watch->OpenForWriting()) {
      watched_.push_back(std::move(w));
    } else {
      // Released; the watch closes with `w`, which frees an unlinked file's blocks.
      store_.ReleaseHeld(w.seq, w.writer.uid, w.accounted.allocated);
    }
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
