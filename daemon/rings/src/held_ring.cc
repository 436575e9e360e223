#include "atraced/rings/held_ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <utility>

#include "atraced/rings/ring_format.h"
#include "atraced/proto/ring_reader.h"

namespace atraced {

Result<HeldRing> HeldRing::Map(UniqueFd memfd, const proto::RingRegister& m) {
  if (!memfd.valid()) return Status::Error(EBADF, "RING_REGISTER: no memfd attached to the frame");
  int seals = ::fcntl(memfd.get(), F_GET_SEALS);
  if (seals < 0) return Status::Error(EINVAL, "memfd: not a memfd (F_GET_SEALS refused)");
  if (!(seals & F_SEAL_SHRINK)) return Status::Error(EINVAL, "memfd: not sealed against shrinking (F_SEAL_SHRINK)");
  struct stat st {};
  if (::fstat(memfd.get(), &st) != 0) {
    int err = errno;
    return Status::Error(err, ErrnoMessage("memfd: fstat", err));
  }
  if (!S_ISREG(st.st_mode)) return Status::Error(EINVAL, "memfd: not a regular memory file");
  if (static_cast<uint64_t>(st.st_size) != m.ring_bytes) {
    return Status::Error(EINVAL, "memfd: holds " + std::to_string(st.st_size) + " bytes, ring_bytes says " +
                                     std::to_string(m.ring_bytes));
  }
  const size_t size = m.ring_bytes;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, memfd.get(), 0);
  if (map == MAP_FAILED) {
    int err = errno;
    return Status::Error(err, ErrnoMessage("memfd: mmap", err));
  }
  HeldRing ring(m, map, size);
  // The header must agree with the registration now; the slots are checked at each save
  // (reading them here would fault in a ring's every page, and copy it for nothing).
  const uint32_t flags = (m.flags & ATR_RING_NO_LOCK) ? ATR_RING_FLAG_NO_LOCK : 0;
  proto::RingSnapshot snap = proto::ReadRingHeader(map, size, proto::RingExpectation{m.msg_num, m.msg_size, flags});
  if (!snap.header_valid) {
    // The reader's problems already start with "ring header: ".
    return Status::Error(EINVAL, snap.problems.empty() ? std::string("ring header: invalid") : snap.problems.front());
  }
  return ring;
}

uint64_t HeldRing::MemoryCost(const proto::RingRegister& m) {
  // The decoded struct entries as they sit in memory: each string's buffer beyond its
  // inline capacity, each vector's elements.
  auto string_cost = [](const std::string& s) { return sizeof(std::string) + (s.size() > 15 ? s.capacity() + 1 : 0); };
  uint64_t metadata = sizeof(proto::RingRegister) + string_cost(m.name) - sizeof(std::string);
  for (const proto::RingStructEntry& e : m.structs) {
    metadata += sizeof(e) + string_cost(e.name) - sizeof(std::string);
    for (const proto::RingStructField& f : e.fields) metadata += sizeof(f) + string_cost(f.name) - sizeof(std::string);
  }
  return uint64_t{m.ring_bytes} + metadata;
}

HeldRing::HeldRing(HeldRing&& other) noexcept
    : reg_(std::move(other.reg_)), map_(std::exchange(other.map_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HeldRing& HeldRing::operator=(HeldRing&& other) noexcept {
  if (this != &other) {
    if (map_ != nullptr) ::munmap(const_cast<void*>(map_), size_);
    reg_ = std::move(other.reg_);
    map_ = std::exchange(other.map_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HeldRing::~HeldRing() {
  if (map_ != nullptr) ::munmap(const_cast<void*>(map_), size_);
}

std::optional<HeldRing::File> HeldRing::Save(std::vector<std::string>* problems) const {
  // Reused across saves (the daemon saves on one thread): a fresh 150 KiB buffer per save
  // is a fresh mmap and ~40 page faults each time.
  thread_local std::vector<uint8_t> copy;
  proto::CopyRingUsed(map_, size_, &copy);
  const uint32_t flags = (reg_.flags & ATR_RING_NO_LOCK) ? ATR_RING_FLAG_NO_LOCK : 0;
  proto::RingSnapshot snap =
      proto::ReadRingSnapshot(std::span<const uint8_t>(copy), proto::RingExpectation{reg_.msg_num, reg_.msg_size, flags});
  if (problems) problems->insert(problems->end(), snap.problems.begin(), snap.problems.end());
  if (!snap.header_valid || snap.records.empty()) return std::nullopt;
  File f{TraceFileName::Object({"schedule", reg_.name, binary()}), {}};
  if (binary()) {
    std::vector<uint8_t> bin = core::FormatRingBinary(snap, reg_.structs, reg_.utc_offset_s);
    f.bytes.assign(bin.begin(), bin.end());
  } else {
    f.bytes = core::FormatRingText(snap, reg_.utc_offset_s);
  }
  if (f.bytes.empty()) return std::nullopt;
  return f;
}

}  // namespace atraced
