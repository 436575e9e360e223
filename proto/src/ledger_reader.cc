#include "atraced/proto/ledger_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "atraced/proto/ring_reader.h"

namespace atraced::proto {

namespace {

// Host byte order (the ledger never leaves the machine), read with memcpy: a copy may sit at
// any alignment.
template <typename T>
T Load(std::span<const uint8_t> bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

#define ATR_LEDGER_FIELD(f) offsetof(struct atr_ledger_record, f)

void AddProblem(LedgerSnapshot* snap, std::string line) {
  if (snap->problems.size() < kMaxLedgerProblems) snap->problems.push_back(std::move(line));
}

// Checks the header at the start of `bytes`, of a ledger `ledger_size` bytes long.
bool ReadHeader(std::span<const uint8_t> bytes, size_t ledger_size, std::optional<uint32_t> expect,
                LedgerSnapshot* snap) {
  auto bad = [&](const std::string& what) {
    AddProblem(snap, "ledger header: " + what);
    return false;
  };
  if (bytes.size() < ATR_LEDGER_HEADER_SIZE) {
    return bad(std::to_string(bytes.size()) + " bytes, smaller than the " + std::to_string(ATR_LEDGER_HEADER_SIZE) +
               "-byte header");
  }
  const auto magic = Load<uint32_t>(bytes, 0);
  const auto version = Load<uint16_t>(bytes, 4);
  const auto header_size = Load<uint16_t>(bytes, 6);
  const auto count = Load<uint32_t>(bytes, ATR_LEDGER_OFF_RECORD_COUNT);
  const auto record_size = Load<uint32_t>(bytes, ATR_LEDGER_OFF_RECORD_SIZE);
  const auto flags = Load<uint32_t>(bytes, ATR_LEDGER_OFF_FLAGS);
  if (magic != ATR_LEDGER_MAGIC) return bad("bad magic " + std::to_string(magic));
  if (version != ATR_LEDGER_VERSION) return bad("unknown version " + std::to_string(version));
  if (header_size != ATR_LEDGER_HEADER_SIZE) return bad("header_size " + std::to_string(header_size));
  if (count == 0 || (count & (count - 1)) != 0 || count > ATR_LEDGER_MAX_RECORDS) {
    return bad("record_count " + std::to_string(count) + " is not a power of two in 1..1024");
  }
  if (record_size != ATR_LEDGER_RECORD_SIZE) return bad("record_size " + std::to_string(record_size));
  if ((flags & ~ATR_LEDGER_KNOWN_FLAGS) != 0) return bad("unknown flags " + std::to_string(flags));
  if (expect && *expect != count) {
    return bad("record_count " + std::to_string(count) + " differs from the registration's " + std::to_string(*expect));
  }
  const uint64_t need = ATR_LEDGER_BYTES(count);
  if (ledger_size < need) {
    return bad(std::to_string(count) + " records need " + std::to_string(need) + " bytes, there are " +
               std::to_string(ledger_size));
  }
  snap->record_count = count;
  snap->flags = flags;
  snap->realtime_ns = Load<uint64_t>(bytes, ATR_LEDGER_OFF_REALTIME);
  snap->monotonic_ns = Load<uint64_t>(bytes, ATR_LEDGER_OFF_MONOTONIC);
  snap->write_index = Load<uint64_t>(bytes, ATR_LEDGER_OFF_WRITE_INDEX);
  return true;
}

enum class Slot { kEmpty, kTorn, kInvalid, kGood };

// Decodes slot `i` of a checked ledger into *r.
Slot ReadRecord(std::span<const uint8_t> rec, uint32_t i, const LedgerSnapshot& snap, LedgerRecord* r,
                std::string* why) {
  const auto seq_done = Load<uint64_t>(rec, ATR_LEDGER_FIELD(seq_done));
  const auto seq_start = Load<uint64_t>(rec, ATR_LEDGER_FIELD(seq_start));
  if (seq_done == 0 && seq_start == 0) return Slot::kEmpty;
  if (seq_done != seq_start || seq_done == 0) return Slot::kTorn;
  const uint64_t k = seq_done - 1;
  auto invalid = [why](std::string what) {
    *why = std::move(what);
    return Slot::kInvalid;
  };
  if ((k & (snap.record_count - 1)) != i) return invalid("a record's sequence does not belong to its slot");
  if (k >= snap.write_index) return invalid("a record's sequence is past write_index");
  const auto flags = Load<uint8_t>(rec, ATR_LEDGER_FIELD(flags));
  const auto op = Load<uint16_t>(rec, ATR_LEDGER_FIELD(op));
  const auto comm_len = Load<uint8_t>(rec, ATR_LEDGER_FIELD(comm_len));
  if ((flags & ~ATR_LEDGER_REC_KNOWN) != 0) return invalid("a record has unknown flags");
  if (op == 0 || op > ATR_LEDGER_OP_MAX) return invalid("a record has an unknown op");
  if (comm_len > ATR_LEDGER_COMM_MAX) return invalid("a record's comm_len is past its field");
  if (Load<uint16_t>(rec, ATR_LEDGER_FIELD(reserved)) != 0) return invalid("a record's reserved field is not 0");
  r->comm_seq = Load<uint64_t>(rec, ATR_LEDGER_FIELD(comm_seq));
  if (r->comm_seq == 0) return invalid("a record's communicator sequence is 0");
  r->rank_known = (flags & ATR_LEDGER_REC_NO_RANK) == 0;
  r->rank = Load<uint32_t>(rec, ATR_LEDGER_FIELD(rank));
  r->size = Load<uint32_t>(rec, ATR_LEDGER_FIELD(size));
  if (r->rank_known && (r->size == 0 || r->rank >= r->size)) return invalid("a record's rank is not below its size");
  if (!r->rank_known && (r->size != 0 || r->rank != 0)) return invalid("a record without a rank has one");
  r->index = k;
  r->enqueue_ns = Load<uint64_t>(rec, ATR_LEDGER_FIELD(enqueue_ns));
  r->count = Load<uint64_t>(rec, ATR_LEDGER_FIELD(count));
  r->stream = Load<uint64_t>(rec, ATR_LEDGER_FIELD(stream));
  const auto peer = Load<uint32_t>(rec, ATR_LEDGER_FIELD(peer));
  if (peer != ATR_LEDGER_NO_PEER) r->peer = peer;
  r->tid = Load<uint32_t>(rec, ATR_LEDGER_FIELD(tid));
  r->op = op;
  r->data_type = Load<uint8_t>(rec, ATR_LEDGER_FIELD(data_type));
  r->reduce_op = Load<uint8_t>(rec, ATR_LEDGER_FIELD(reduce_op));
  r->comm.assign(reinterpret_cast<const char*>(rec.data() + ATR_LEDGER_FIELD(comm)), comm_len);
  r->comm_cut = (flags & ATR_LEDGER_REC_NAME_CUT) != 0;
  r->completion_tracked = (flags & ATR_LEDGER_REC_COMPLETION) != 0;
  const auto completion_ns = Load<uint64_t>(rec, ATR_LEDGER_FIELD(completion_ns));
  const auto completion_seq = Load<uint64_t>(rec, ATR_LEDGER_FIELD(completion_seq));
  // Another call's completion (a reused slot), or one not yet stored whole, is no completion.
  if (r->completion_tracked && completion_seq == seq_done && completion_ns != 0 && completion_ns >= r->enqueue_ns) {
    r->completion_ns = completion_ns;
  }
  return Slot::kGood;
}

}  // namespace

LedgerSnapshot ReadLedger(std::span<const uint8_t> bytes, std::optional<uint32_t> expect_records) {
  LedgerSnapshot snap;
  if (!ReadHeader(bytes, bytes.size(), expect_records, &snap)) return snap;
  snap.header_valid = true;
  std::vector<std::string> kinds;  // each kind of invalid record said once
  for (uint32_t i = 0; i < snap.record_count; ++i) {
    const auto rec = bytes.subspan(ATR_LEDGER_HEADER_SIZE + size_t{i} * ATR_LEDGER_RECORD_SIZE, ATR_LEDGER_RECORD_SIZE);
    LedgerRecord r;
    std::string why;
    switch (ReadRecord(rec, i, snap, &r, &why)) {
      case Slot::kEmpty: ++snap.empty; break;
      case Slot::kTorn: ++snap.torn; break;
      case Slot::kInvalid:
        ++snap.invalid;
        if (std::find(kinds.begin(), kinds.end(), why) == kinds.end()) {
          kinds.push_back(why);
          AddProblem(&snap, "ledger: " + why);
        }
        break;
      case Slot::kGood: snap.records.push_back(std::move(r)); break;
    }
  }
  if (snap.torn != 0) AddProblem(&snap, "ledger: " + std::to_string(snap.torn) + " record(s) torn (being written)");
  std::sort(snap.records.begin(), snap.records.end(),
            [](const LedgerRecord& a, const LedgerRecord& b) { return a.index < b.index; });
  return snap;
}

LedgerSnapshot ReadLedgerHeader(const void* mapping, size_t size, std::optional<uint32_t> expect_records) {
  std::vector<uint8_t> header;
  CopyRingSnapshot(mapping, std::min<size_t>(size, ATR_LEDGER_HEADER_SIZE), &header);
  LedgerSnapshot snap;
  snap.header_valid = ReadHeader({header.data(), header.size()}, size, expect_records, &snap);
  return snap;
}

size_t CopyLedgerUsed(const void* mapping, size_t size, std::vector<uint8_t>* out) {
  std::vector<uint8_t> header;
  CopyRingSnapshot(mapping, std::min<size_t>(size, ATR_LEDGER_HEADER_SIZE), &header);
  LedgerSnapshot layout;
  if (!ReadHeader({header.data(), header.size()}, size, std::nullopt, &layout)) {
    *out = std::move(header);  // what there is of it, which the reader refuses again
    return out->size();
  }
  const uint64_t used_records = std::min<uint64_t>(layout.write_index, layout.record_count);
  const size_t used = ATR_LEDGER_HEADER_SIZE + static_cast<size_t>(used_records) * ATR_LEDGER_RECORD_SIZE;
  std::vector<uint8_t> body;
  CopyRingSnapshot(static_cast<const uint8_t*>(mapping) + ATR_LEDGER_HEADER_SIZE, used - ATR_LEDGER_HEADER_SIZE, &body);
  out->assign(ATR_LEDGER_BYTES(layout.record_count), 0);
  std::memcpy(out->data(), header.data(), ATR_LEDGER_HEADER_SIZE);
  if (!body.empty()) std::memcpy(out->data() + ATR_LEDGER_HEADER_SIZE, body.data(), body.size());
  return used;
}

bool ReadLedgerFile(const std::string& path, LedgerSnapshot* out, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    *why = std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes(kMaxLedgerBytes);
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  *out = ReadLedger(bytes);
  return true;
}

std::string LedgerOpName(uint16_t op) {
  static constexpr const char* kNames[] = {nullptr,         "AllReduce",      "Broadcast", "AllGather",
                                           "AllGatherV",    "ReduceScatter",  "ReduceScatterV",
                                           "AlltoAll",      "AlltoAllV",      "AlltoAllVC", "Reduce",
                                           "Scatter",       "Send",           "Recv",      "BatchSendRecv",
                                           "Barrier"};
  static_assert(sizeof kNames / sizeof kNames[0] == ATR_LEDGER_OP_MAX + 1);
  if (op >= 1 && op <= ATR_LEDGER_OP_MAX) return kNames[op];
  return "op " + std::to_string(op);
}

std::string HcclDataTypeName(uint8_t t) {
  static constexpr const char* kNames[] = {"int8",   "int16", "int32", "fp16", "fp32",  "int64", "uint64",
                                           "uint8",  "uint16", "uint32", "fp64", "bf16", "int128", nullptr,
                                           "hif8", "fp8e4m3", "fp8e5m2", "fp8e8m0"};
  if (t < sizeof kNames / sizeof kNames[0] && kNames[t] != nullptr) return kNames[t];
  return "dtype " + std::to_string(t);
}

std::string HcclReduceOpName(uint8_t r) {
  static constexpr const char* kNames[] = {"sum", "prod", "max", "min"};
  if (r < 4) return kNames[r];
  return "reduce " + std::to_string(r);
}

bool LedgerOpHasReduce(uint16_t op) {
  return op == ATR_LEDGER_OP_ALL_REDUCE || op == ATR_LEDGER_OP_REDUCE_SCATTER || op == ATR_LEDGER_OP_REDUCE_SCATTER_V ||
         op == ATR_LEDGER_OP_REDUCE;
}

}  // namespace atraced::proto
