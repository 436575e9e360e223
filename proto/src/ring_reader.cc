#include "atraced/proto/ring_reader.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace atraced::proto {

namespace {

// The ring never leaves the machine, so it is in host byte order; read fields with memcpy
// (the copy may sit at any alignment) rather than through a struct pointer.
template <typename T>
T Load(std::span<const uint8_t> bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

class Problems {
 public:
  explicit Problems(std::vector<std::string>* out) : out_(out) {}
  void Add(std::string line) {
    if (out_->size() < kMaxRingProblems) out_->push_back(std::move(line));
  }

 private:
  std::vector<std::string>* out_;
};

bool IsPowerOfTwo(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Checks the header at the start of `bytes`, of a ring `ring_size` bytes long; on success
// fills the layout fields of *snap.
bool ReadHeader(std::span<const uint8_t> bytes, size_t ring_size, const std::optional<RingExpectation>& expect,
                RingSnapshot* snap, Problems* problems) {
  if (bytes.size() < ATR_RING_HEADER_SIZE || ring_size < ATR_RING_HEADER_SIZE) {
    problems->Add("ring: " + std::to_string(ring_size) + " bytes, smaller than the " +
                  std::to_string(ATR_RING_HEADER_SIZE) + "-byte header");
    return false;
  }
  const auto magic = Load<uint32_t>(bytes, ATR_RING_OFF_MAGIC);
  const auto version = Load<uint16_t>(bytes, ATR_RING_OFF_VERSION);
  const auto header_size = Load<uint16_t>(bytes, ATR_RING_OFF_HEADER_SIZE);
  const auto msg_num = Load<uint32_t>(bytes, ATR_RING_OFF_MSG_NUM);
  const auto msg_size = Load<uint32_t>(bytes, ATR_RING_OFF_MSG_SIZE);
  const auto slot_size = Load<uint32_t>(bytes, ATR_RING_OFF_SLOT_SIZE);
  const auto flags = Load<uint32_t>(bytes, ATR_RING_OFF_FLAGS);
  auto bad = [&](const std::string& what) {
    problems->Add("ring header: " + what);
    return false;
  };
  if (magic != ATR_RING_MAGIC) return bad("bad magic " + std::to_string(magic));
  if (version != ATR_RING_VERSION) return bad("unknown version " + std::to_string(version));
  if (header_size != ATR_RING_HEADER_SIZE) return bad("header_size " + std::to_string(header_size));
  if (!IsPowerOfTwo(msg_num) || msg_num > ATR_RING_MAX_MSG_NUM) {
    return bad("msg_num " + std::to_string(msg_num) + " is not a power of two in 1..1024");
  }
  if (msg_size < ATR_RING_MIN_MSG_SIZE || msg_size > ATR_RING_MAX_MSG_SIZE) {
    return bad("msg_size " + std::to_string(msg_size) + " outside 64..1024");
  }
  if (slot_size != ATR_RING_SLOT_SIZE(msg_size)) return bad("slot_size " + std::to_string(slot_size));
  if ((flags & ~ATR_RING_KNOWN_FLAGS) != 0) return bad("unknown flags " + std::to_string(flags));
  if (expect && (expect->msg_num != msg_num || expect->msg_size != msg_size || expect->flags != flags)) {
    return bad("msg_num/msg_size/flags " + std::to_string(msg_num) + "/" + std::to_string(msg_size) +
               "/" + std::to_string(flags) + " differ from the registration's " +
               std::to_string(expect->msg_num) + "/" + std::to_string(expect->msg_size) + "/" +
               std::to_string(expect->flags));
  }
  // Both factors are bounded above, so this cannot overflow.
  const uint64_t need = ATR_RING_BYTES(msg_num, msg_size);
  if (ring_size < need) {
    return bad(std::to_string(msg_num) + " slots need " + std::to_string(need) + " bytes, the ring has " +
               std::to_string(ring_size));
  }
  snap->msg_num = msg_num;
  snap->msg_size = msg_size;
  snap->flags = flags;
  snap->realtime_ns = Load<uint64_t>(bytes, ATR_RING_OFF_REALTIME);
  snap->monotonic_ns = Load<uint64_t>(bytes, ATR_RING_OFF_MONOTONIC);
  snap->counter_anchor = Load<uint64_t>(bytes, ATR_RING_OFF_COUNTER_ANCHOR);
  snap->write_index = Load<uint64_t>(bytes, ATR_RING_OFF_WRITE_INDEX);
  snap->dropped = Load<uint64_t>(bytes, ATR_RING_OFF_DROPPED);
  return true;
}

}  // namespace

namespace {

// Word by word with acquire loads: no later load (the rest of this slot, its seq_start) may
// be satisfied before this one. Atomic loads also keep the copy free of data races with the
// writers. `src` is 8-byte aligned; a ring is always a whole number of words, so a tail can
// only be a caller's odd size.
void CopyAcquire(const void* src, uint8_t* dst, size_t size) {
  const auto* words = static_cast<const uint64_t*>(src);
  const size_t n = size / 8;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t w = __atomic_load_n(words + i, __ATOMIC_ACQUIRE);
    std::memcpy(dst + i * 8, &w, 8);
  }
  for (size_t i = n * 8; i < size; ++i) dst[i] = __atomic_load_n(static_cast<const uint8_t*>(src) + i, __ATOMIC_ACQUIRE);
}

}  // namespace

void CopyRingSnapshot(const void* mapping, size_t size, std::vector<uint8_t>* out) {
  out->resize(size);
  CopyAcquire(mapping, out->data(), size);
}

namespace {

// Copies the header of a live ring `size` bytes long into `header` and checks it as
// ReadRingSnapshot would; on success *snap has the layout fields (write_index included).
bool ReadLiveHeader(const void* mapping, size_t size, const std::optional<RingExpectation>& expect,
                    uint8_t (&header)[ATR_RING_HEADER_SIZE], RingSnapshot* snap) {
  const size_t n = std::min<size_t>(size, ATR_RING_HEADER_SIZE);
  CopyAcquire(mapping, header, n);
  Problems problems(&snap->problems);
  snap->header_valid = ReadHeader(std::span<const uint8_t>(header, n), size, expect, snap, &problems);
  return snap->header_valid;
}

}  // namespace

RingSnapshot ReadRingHeader(const void* mapping, size_t size, const std::optional<RingExpectation>& expect) {
  RingSnapshot snap;
  uint8_t header[ATR_RING_HEADER_SIZE] = {};
  ReadLiveHeader(mapping, size, expect, header, &snap);
  return snap;
}

size_t CopyRingUsed(const void* mapping, size_t size, std::vector<uint8_t>* out, uint64_t max_slots) {
  uint8_t header[ATR_RING_HEADER_SIZE] = {};
  RingSnapshot layout;
  if (!ReadLiveHeader(mapping, size, std::nullopt, header, &layout)) {
    // Not a ring within `size`: what there is of the header, which the reader rejects.
    const size_t n = std::min<size_t>(size, sizeof header);
    out->assign(header, header + n);
    return n;
  }
  const uint64_t used_slots = std::min<uint64_t>({layout.write_index, layout.msg_num, max_slots});
  const size_t used = ATR_RING_HEADER_SIZE + static_cast<size_t>(used_slots) * ATR_RING_SLOT_SIZE(layout.msg_size);
  // Slots past `used` must read as empty (zero); the ones below are all overwritten by the
  // copy, so only the tail is cleared (a full default ring: no memset of 458 KB per save).
  const size_t total = ATR_RING_BYTES(layout.msg_num, layout.msg_size);
  out->resize(total);
  std::memset(out->data() + used, 0, total - used);
  std::memcpy(out->data(), header, sizeof header);
  CopyAcquire(static_cast<const uint8_t*>(mapping) + sizeof header, out->data() + sizeof header, used - sizeof header);
  return used;
}

RingSnapshot ReadRingSnapshot(std::span<const uint8_t> bytes, const std::optional<RingExpectation>& expect) {
  RingSnapshot snap;
  Problems problems(&snap.problems);
  if (!ReadHeader(bytes, bytes.size(), expect, &snap, &problems)) return snap;
  snap.header_valid = true;

  const uint32_t slot_size = ATR_RING_SLOT_SIZE(snap.msg_size);
  const uint64_t mask = snap.msg_num - 1;
  bool reported_index = false, reported_length = false;
  snap.records.reserve(snap.msg_num);
  for (uint32_t i = 0; i < snap.msg_num; ++i) {
    const size_t at = ATR_RING_HEADER_SIZE + static_cast<size_t>(i) * slot_size;
    const auto seq_done = Load<uint64_t>(bytes, at);
    const auto seq_start = Load<uint64_t>(bytes, at + slot_size - 8);
    if (seq_done == 0 && seq_start == 0) {
      ++snap.empty;
      continue;
    }
    if (seq_done != seq_start) {
      ++snap.torn;
      continue;
    }
    const uint64_t index = seq_done - 1;
    if ((index & mask) != i) {
      ++snap.invalid;
      if (!reported_index) {
        problems.Add("slot " + std::to_string(i) + ": sequence " + std::to_string(seq_done) +
                     " belongs to slot " + std::to_string(index & mask));
        reported_index = true;
      }
      continue;
    }
    const auto length = Load<uint32_t>(bytes, at + 16);
    if (length > snap.msg_size) {
      ++snap.invalid;
      if (!reported_length) {
        problems.Add("slot " + std::to_string(i) + ": length " + std::to_string(length) + " exceeds msg_size " +
                     std::to_string(snap.msg_size));
        reported_length = true;
      }
      continue;
    }
    RingRecord r;
    r.index = index;
    r.timestamp_ns = Load<uint64_t>(bytes, at + 8);
    r.buffer_type = bytes[at + 20];
    r.data = bytes.subspan(at + ATR_RING_SLOT_HEAD_SIZE, length);
    snap.records.push_back(r);
  }
  if (snap.torn > 0) {
    problems.Add(std::to_string(snap.torn) + " slot(s) were being written during the copy");
  }
  // Timestamp order, ties by index. The records come in slot order: a ring that never wrapped
  // is in order already, and one that wrapped is that order turned at its oldest record.
  // Both are checked in linear time before the sort, which remains for stamps interleaved by
  // writers on several threads; the result is the same either way (the order is total).
  const auto by_time = [](const RingRecord& a, const RingRecord& b) {
    return a.timestamp_ns != b.timestamp_ns ? a.timestamp_ns < b.timestamp_ns : a.index < b.index;
  };
  auto& rs = snap.records;
  if (!std::is_sorted(rs.begin(), rs.end(), by_time)) {
    std::rotate(rs.begin(),
                std::min_element(rs.begin(), rs.end(), [](const RingRecord& a, const RingRecord& b) { return a.index < b.index; }),
                rs.end());
    if (!std::is_sorted(rs.begin(), rs.end(), by_time)) std::sort(rs.begin(), rs.end(), by_time);
  }
  return snap;
}

}  // namespace atraced::proto
