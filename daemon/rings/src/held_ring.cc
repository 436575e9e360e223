#include "atraced/rings/held_ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "atraced/rings/counter_clock.h"
#include "atraced/proto/ring_positions.h"
#include "atraced/rings/ring_format.h"
#include "atraced/proto/ledger_reader.h"
#include "atraced/proto/ring_reader.h"

namespace atraced {

struct RingMapping {
  RingMapping(proto::RingRegister r, const void* m, size_t s, Unmapper& u, core::CounterClock* c)
      : reg(std::move(r)), map(m), size(s), unmapper(u), clock(c) {}
  RingMapping(const RingMapping&) = delete;
  RingMapping& operator=(const RingMapping&) = delete;
  ~RingMapping() { unmapper.Unmap(map, size); }

  uint32_t flags() const {
    return ((reg.flags & ATR_RING_NO_LOCK) ? ATR_RING_FLAG_NO_LOCK : 0) |
           ((reg.flags & ATR_RING_COUNTER) ? ATR_RING_FLAG_COUNTER : 0);
  }
  proto::RingExpectation expectation() const { return {reg.msg_num, reg.msg_size, flags()}; }
  bool ledger() const { return (reg.flags & ATR_RING_LEDGER) != 0; }
  // The header as a save or a registration checks it: a tracer ring's or a ledger's.
  bool HeaderValid(std::vector<std::string>* problems, uint64_t* write_index, uint64_t* slots) const {
    if (ledger()) {
      proto::LedgerSnapshot head = proto::ReadLedgerHeader(map, size, reg.msg_num);
      if (problems) problems->insert(problems->end(), head.problems.begin(), head.problems.end());
      *write_index = head.write_index;
      *slots = head.record_count;
      return head.header_valid;
    }
    proto::RingSnapshot head = proto::ReadRingHeader(map, size, expectation());
    if (problems) problems->insert(problems->end(), head.problems.begin(), head.problems.end());
    *write_index = head.write_index;
    *slots = head.msg_num;
    return head.header_valid;
  }

  // A ledger's records now: copied into `copy` (what a save writes) and checked.
  proto::LedgerSnapshot ReadLedgerNow(std::vector<uint8_t>& copy) const {
    proto::CopyLedgerUsed(map, size, &copy);
    return proto::ReadLedger(std::span<const uint8_t>(copy), reg.msg_num);
  }

  const proto::RingRegister reg;
  const void* const map;
  const size_t size;
  Unmapper& unmapper;
  core::CounterClock* const clock;  // null: no snapshot history (tests)
};

namespace {

// "atraced: N record(s) lost: A dropped, B torn, C invalid\n" with 20-digit counts is 132.
constexpr uint64_t kLostLineMax = 160;

// Either form ends with the positions line (proto/ring_positions.h).
uint64_t MaxFormatted(const proto::RingRegister& reg, uint64_t slots) {
  const uint64_t positions = proto::MaxRingPositionsLine(slots);
  if (reg.structs.empty()) return slots * (28 + uint64_t{reg.msg_size}) + kLostLineMax + positions;
  uint64_t heads = 48 + 40 + 16;  // TraceCtrlHead, TraceStructSegmentHead, TraceStructDataHead
  for (const proto::RingStructEntry& e : reg.structs) heads += 40 + 40 * uint64_t{e.fields.size()};
  return heads + slots * (16 + uint64_t{reg.msg_size}) + positions;
}

}  // namespace

Result<HeldRing> HeldRing::Map(UniqueFd memfd, const proto::RingRegister& m, Unmapper& unmapper,
                              core::CounterClock* clock) {
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
  auto ring = std::make_shared<RingMapping>(m, map, size, unmapper, clock);
  // The header must agree with the registration now; the slots are checked at each save
  // (reading them here would fault in a ring's every page, and copy it for nothing).
  std::vector<std::string> problems;
  uint64_t write_index = 0, slots = 0;
  if (!ring->HeaderValid(&problems, &write_index, &slots)) {
    // The readers' problems already start with "ring header: " or "ledger header: ".
    return Status::Error(EINVAL, problems.empty() ? std::string("ring header: invalid") : problems.front());
  }
  return HeldRing(std::move(ring));
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

uint32_t HeldRing::object_id() const { return ring_->reg.object_id; }
const std::string& HeldRing::name() const { return ring_->reg.name; }
bool HeldRing::exit_save() const { return (ring_->reg.flags & ATR_RING_EXIT_SAVE) != 0; }
bool HeldRing::binary() const { return !ring_->reg.structs.empty(); }
size_t HeldRing::bytes() const { return ring_->size; }
uint64_t HeldRing::write_index() const {
  // Map checked the header fits; the field is 8-byte aligned in a page-aligned mapping.
  const auto* field = reinterpret_cast<const uint64_t*>(static_cast<const uint8_t*>(ring_->map) + ATR_RING_OFF_WRITE_INDEX);
  return __atomic_load_n(field, __ATOMIC_RELAXED);
}

std::optional<HeldRing::Record> HeldRing::LastRecord(size_t max_bytes) const {
  std::vector<uint8_t> copy;
  proto::CopyRingUsed(ring_->map, ring_->size, &copy);
  const proto::RingSnapshot snap = proto::ReadRingSnapshot(std::span<const uint8_t>(copy), ring_->expectation());
  if (!snap.header_valid || snap.records.empty()) return std::nullopt;
  const proto::RingRecord& last = snap.records.back();
  std::string_view data(reinterpret_cast<const char*>(last.data.data()), last.data.size());
  data = data.substr(0, std::min(data.find('\0'), max_bytes));
  return Record{last.index, std::string(data)};
}

std::optional<RingSavePlan> HeldRing::PlanSave(std::vector<std::string>* problems) const {
  uint64_t write_index = 0, capacity = 0;
  if (!ring_->HeaderValid(problems, &write_index, &capacity) || write_index == 0) return std::nullopt;
  const uint64_t slots = std::min<uint64_t>(write_index, capacity);
  if (ring_->ledger()) {
    // The ledger is saved as it is laid out (its file format): header and every slot.
    return RingSavePlan(ring_, TraceFileName::Ledger(), slots, ATR_LEDGER_BYTES(capacity));
  }
  return RingSavePlan(ring_, TraceFileName::Object({"schedule", ring_->reg.name, binary()}), slots,
                      MaxFormatted(ring_->reg, slots));
}

std::string RingSavePlan::Format(std::vector<std::string>* problems) const {
  // Reused across saves on this thread: a fresh 150 KiB buffer per save is a fresh mmap
  // and ~40 page faults each time.
  thread_local std::vector<uint8_t> copy;
  if (ring_->ledger()) return FormatLedger(copy, problems);
  proto::CopyRingUsed(ring_->map, ring_->size, &copy, slots_);
  proto::RingSnapshot snap = proto::ReadRingSnapshot(std::span<const uint8_t>(copy), ring_->expectation());
  if (problems) problems->insert(problems->end(), snap.problems.begin(), snap.problems.end());
  if (!snap.header_valid || snap.records.empty()) return {};
  // After the copy: every stamp in it is then older than this sample.
  const bool counter = (snap.flags & ATR_RING_FLAG_COUNTER) != 0;
  core::RingTimeline time;
  if (counter && ring_->clock != nullptr) {
    const ClockSample now = ring_->clock->SampleForSave();
    const std::vector<core::ClockSnapshot> history = ring_->clock->Since(static_cast<int64_t>(snap.monotonic_ns));
    time = core::RingTimeline::Of(snap, history, now);
  } else {
    time = core::RingTimeline::Of(snap, SampleClocks(counter));
  }
  if (problems && !time.problem().empty()) problems->push_back(time.problem());
  const proto::RingRegister& reg = ring_->reg;
  // Either form ends with where each record sits in the ring (proto/ring_positions.h), so
  // that a reader of a later save of this ring knows the records it already has.
  if (!reg.structs.empty()) {
    std::vector<uint8_t> bin = core::FormatRingBinary(snap, time, reg.structs, reg.utc_offset_s);
    return std::string(bin.begin(), bin.end()) + core::RingPositionsLine(snap, time);
  }
  return core::FormatRingText(snap, time, reg.utc_offset_s) + core::RingPositionsLine(snap, time);
}

std::string RingSavePlan::FormatLedger(std::vector<uint8_t>& copy, std::vector<std::string>* problems) const {
  // Checked, so that the log says what is wrong with it and an empty or broken one makes no
  // file; written as copied: its readers check every record again (ledger_reader.h).
  proto::LedgerSnapshot snap = ring_->ReadLedgerNow(copy);
  if (problems) problems->insert(problems->end(), snap.problems.begin(), snap.problems.end());
  if (!snap.header_valid || snap.records.empty()) return {};
  return std::string(copy.begin(), copy.end());
}

bool HeldRing::ledger() const { return ring_->ledger(); }

std::optional<proto::LedgerSnapshot> HeldRing::LedgerNow() const {
  if (!ring_->ledger()) return std::nullopt;
  std::vector<uint8_t> copy;
  return ring_->ReadLedgerNow(copy);
}

std::optional<HeldRing::File> HeldRing::Save(std::vector<std::string>* problems) const {
  std::optional<RingSavePlan> plan = PlanSave(problems);
  if (!plan) return std::nullopt;
  File f{plan->file_name(), plan->Format(problems)};
  if (f.bytes.empty()) return std::nullopt;
  return f;
}

}  // namespace atraced
