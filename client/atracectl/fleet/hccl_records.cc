#include "fleet/hccl_records.h"

#include <algorithm>
#include <charconv>

#include "atraced/proto/ledger_summary.h"
#include "fleet/collectives_input.h"

namespace atracectl {

namespace proto = atraced::proto;

namespace {

// A decimal of at most `max_digits` digits at the front of `s`, which it consumes.
std::optional<uint64_t> Decimal(std::string_view* s, size_t max_digits) {
  size_t n = 0;
  while (n < s->size() && n < max_digits + 1 && (*s)[n] >= '0' && (*s)[n] <= '9') ++n;
  if (n == 0 || n > max_digits) return std::nullopt;
  uint64_t v = 0;
  if (std::from_chars(s->data(), s->data() + n, v).ec != std::errc{}) return std::nullopt;
  s->remove_prefix(n);
  return v;
}

// "<tid>_<index>_" at the front of `s`, consumed.
std::optional<std::pair<uint32_t, uint64_t>> Prefix(std::string_view* s) {
  std::string_view r = *s;
  const auto tid = Decimal(&r, 10);
  if (!tid || *tid > UINT32_MAX || r.empty() || r.front() != '_') return std::nullopt;
  r.remove_prefix(1);
  const auto index = Decimal(&r, 20);
  if (!index || r.empty() || r.front() != '_') return std::nullopt;
  r.remove_prefix(1);
  *s = r;
  return std::pair<uint32_t, uint64_t>{static_cast<uint32_t>(*tid), *index};
}

// The value of "name[value]" in an entry's field list ("a[1], name[v], ..."): the first
// field of that name, at the start or after ", ".
std::optional<std::string_view> Field(std::string_view fields, std::string_view name) {
  for (size_t at = 0; at < fields.size();) {
    const size_t found = fields.find(name, at);
    if (found == std::string_view::npos) return std::nullopt;
    const bool starts = found == 0 || (found >= 2 && fields.substr(found - 2, 2) == ", ") || fields[found - 1] == ' ';
    const size_t open = found + name.size();
    if (starts && open < fields.size() && fields[open] == '[') {
      const size_t close = fields.find(']', open + 1);
      if (close == std::string_view::npos) return std::nullopt;
      return fields.substr(open + 1, close - open - 1);
    }
    at = found + 1;
  }
  return std::nullopt;
}

std::optional<uint64_t> FieldNumber(std::string_view fields, std::string_view name, size_t digits = 20) {
  auto v = Field(fields, name);
  if (!v) return std::nullopt;
  std::string_view s = *v;
  auto n = Decimal(&s, digits);
  if (!n || !s.empty()) return std::nullopt;
  return n;
}

// HCCL's names (hccl_common.h's HCOM_DATA_TYPE_STR_MAP, HCOM_REDUCE_OP_STR_MAP) to its enums.
std::optional<uint8_t> DataTypeOf(std::string_view name) {
  static constexpr std::pair<std::string_view, uint8_t> kTypes[] = {
      {"int8", 0},    {"int16", 1},   {"int32", 2},     {"float16", 3},  {"float32", 4},
      {"int64", 5},   {"uint64", 6},  {"uint8", 7},     {"uint16", 8},   {"uint32", 9},
      {"float64", 10}, {"bfloat16", 11}, {"int128", 12}, {"fp8e4m3", 15}, {"fp8e5m2", 16}};
  for (const auto& [n, v] : kTypes) {
    if (n == name) return v;
  }
  return std::nullopt;
}
std::optional<uint8_t> ReduceOf(std::string_view name) {
  static constexpr std::string_view kOps[] = {"sum", "prod", "max", "min"};
  for (uint8_t i = 0; i < 4; ++i) {
    if (kOps[i] == name) return i;
  }
  return std::nullopt;
}

// The entry's function (after "Entry-Hccl", before ':') to the ledger's op.
struct EntryOp {
  std::string_view function;
  uint16_t op;
};
constexpr EntryOp kEntryOps[] = {
    {"AllReduceInner", ATR_LEDGER_OP_ALL_REDUCE},     {"BroadcastInner", ATR_LEDGER_OP_BROADCAST},
    {"AllGatherInner", ATR_LEDGER_OP_ALL_GATHER},     {"AllGatherVInner", ATR_LEDGER_OP_ALL_GATHER_V},
    {"ReduceScatterInner", ATR_LEDGER_OP_REDUCE_SCATTER}, {"ReduceScatterVInner", ATR_LEDGER_OP_REDUCE_SCATTER_V},
    {"AlltoAllInner", ATR_LEDGER_OP_ALL_TO_ALL},      {"AlltoAllVInner", ATR_LEDGER_OP_ALL_TO_ALL_V},
    {"AlltoAllVCInner", ATR_LEDGER_OP_ALL_TO_ALL_VC}, {"ReduceInner", ATR_LEDGER_OP_REDUCE},
    {"ScatterInner", ATR_LEDGER_OP_SCATTER},          {"SendInner", ATR_LEDGER_OP_SEND},
    {"RecvInner", ATR_LEDGER_OP_RECV},                {"BatchSendRecvInner", ATR_LEDGER_OP_BATCH_SEND_RECV},
    {"BatchSendRecvGroup", ATR_LEDGER_OP_BATCH_SEND_RECV}, {"Barrier", ATR_LEDGER_OP_BARRIER},
};

// The communicator's name in a tag: "<Op>_<name>" ("AllReduce_hccl_world_group"), and for
// Send and Recv "worldCommSendRecv_<src>_<dst>_<name>" (op_base.cc), whose peer it gives.
bool CommOfTag(std::string_view tag, uint16_t op, proto::LedgerRecord* out) {
  if (op == ATR_LEDGER_OP_SEND || op == ATR_LEDGER_OP_RECV) {
    constexpr std::string_view kHead = "worldCommSendRecv_";
    if (tag.substr(0, kHead.size()) != kHead) return false;
    tag.remove_prefix(kHead.size());
    const auto src = Decimal(&tag, 10);
    if (!src || tag.empty() || tag.front() != '_') return false;
    tag.remove_prefix(1);
    const auto dst = Decimal(&tag, 10);
    if (!dst || tag.empty() || tag.front() != '_' || *src > UINT32_MAX || *dst > UINT32_MAX) return false;
    tag.remove_prefix(1);
    out->peer = static_cast<uint32_t>(op == ATR_LEDGER_OP_SEND ? *dst : *src);
  } else {
    const size_t under = tag.find('_');
    if (under == std::string_view::npos || under == 0) return false;
    tag.remove_prefix(under + 1);
  }
  if (tag.empty()) return false;
  out->comm_cut = tag.size() > ATR_LEDGER_COMM_MAX;
  out->comm = std::string(tag.substr(0, ATR_LEDGER_COMM_MAX));
  return true;
}

}  // namespace

bool IsHcclObject(std::string_view object) {
  constexpr std::string_view kHead = "HCCL_";
  if (object.substr(0, kHead.size()) != kHead) return false;
  object.remove_prefix(kHead.size());
  if (!Decimal(&object, 10) || object.empty() || object.front() != '_') return false;
  object.remove_prefix(1);
  return Decimal(&object, 10) && object.empty();
}

HcclRecordRead ReadHcclRecord(std::string_view record) {
  HcclRecordRead out;
  if (record.size() > kMaxHcclRecordBytes) return out;
  const auto prefix = Prefix(&record);
  if (!prefix) {
    // "<tid>_<text>": HCCL's records without an index (an algorithm's choice, AtraceOption::Algtype).
    if (Decimal(&record, 10) && !record.empty() && record.front() == '_') out.kind = HcclRecordKind::kOther;
    return out;
  }
  constexpr std::string_view kEntry = "Entry-Hccl";
  if (record.substr(0, kEntry.size()) != kEntry) {
    out.kind = HcclRecordKind::kOther;
    return out;
  }
  record.remove_prefix(kEntry.size());
  const size_t colon = record.find(':');
  if (colon == std::string_view::npos) return out;
  const std::string_view function = record.substr(0, colon);
  std::string_view fields = record.substr(colon + 1);
  if (!fields.empty() && fields.front() == ' ') fields.remove_prefix(1);
  const EntryOp* op = nullptr;
  for (const EntryOp& e : kEntryOps) {
    if (e.function == function) op = &e;
  }
  if (op == nullptr) {  // an entry of something else (HcclCreateComResource, HcclGatherAlltoAllV)
    out.kind = HcclRecordKind::kOther;
    return out;
  }
  proto::LedgerRecord& c = out.call;
  bool local_rank = false;
  c.tid = prefix->first;
  c.comm_seq = prefix->second;
  c.index = prefix->second;
  c.op = op->op;
  c.data_type = 255;
  c.reduce_op = 255;
  // The tag ends at the first "], ": a communicator's name with "], " in it reads cut there.
  if (fields.substr(0, 4) != "tag[") return out;
  const size_t tag_end = fields.find("], ");
  const size_t close = tag_end == std::string_view::npos ? fields.rfind(']') : tag_end;
  if (close == std::string_view::npos || close < 4) return out;
  if (!CommOfTag(fields.substr(4, close - 4), c.op, &c)) return out;
  const std::string_view rest = fields.substr(close + 1);
  if (c.op != ATR_LEDGER_OP_BARRIER && c.op != ATR_LEDGER_OP_BATCH_SEND_RECV) {
    std::optional<uint64_t> count;
    for (std::string_view name : {"count", "recvCount", "sendCount"}) {
      if (!count) count = FieldNumber(rest, name);
    }
    if (!count) return out;
    c.count = *count;
    std::optional<std::string_view> type = Field(rest, "dataType");
    if (!type) type = Field(rest, "sendType");
    if (type) {
      const auto t = DataTypeOf(*type);
      if (!t) return out;
      c.data_type = *t;
    }
  } else if (c.op == ATR_LEDGER_OP_BATCH_SEND_RECV) {
    const auto items = FieldNumber(rest, "itemNum", 10);
    if (!items) return out;
    c.count = *items;
  }
  if (const auto rank = FieldNumber(rest, "localRank", 10); rank && *rank <= UINT32_MAX) {
    c.rank = static_cast<uint32_t>(*rank);  // rank_known stays false: HCCL's records carry no size
    local_rank = true;
  }
  if (proto::LedgerOpHasReduce(c.op)) {
    const auto reduce = Field(rest, "op");
    if (!reduce || !ReduceOf(*reduce)) return out;
    c.reduce_op = *ReduceOf(*reduce);
  }
  if (c.op == ATR_LEDGER_OP_BROADCAST || c.op == ATR_LEDGER_OP_SCATTER || c.op == ATR_LEDGER_OP_REDUCE) {
    const auto root = FieldNumber(rest, "root", 10);
    if (!root || *root > UINT32_MAX) return out;
    c.peer = static_cast<uint32_t>(*root);
  }
  out.kind = HcclRecordKind::kEntry;
  out.local_rank = local_rank;
  return out;
}

void HcclRecords::BeginRing() {
  pending_.clear();
  joining_ = over_ = false;
}

void HcclRecords::Piece(std::string_view text) {
  bool continues = joining_;
  if (continues) {
    // A full piece's record may have ended there: a piece opening with the same thread's
    // prefix is a new record.
    std::string_view p = pending_, t = text;
    const auto a = Prefix(&p), b = Prefix(&t);
    if (a && b && a->first == b->first) continues = false;
  }
  if (!continues) {
    Finish();
    pending_.clear();
    over_ = false;
  }
  if (pending_.size() + text.size() > kMaxHcclRecordBytes) {
    over_ = true;
  } else {
    pending_.append(text);
  }
  joining_ = text.size() == kHcclPieceBytes;
}

void HcclRecords::EndRing() {
  Finish();
  pending_.clear();
  joining_ = over_ = false;
}

void HcclRecords::Finish() {
  if (pending_.empty() && !over_) return;
  if (over_) {
    ++skipped_;
    return;
  }
  HcclRecordRead r = ReadHcclRecord(pending_);
  if (r.kind == HcclRecordKind::kMalformed) {
    ++skipped_;
    return;
  }
  if (r.kind != HcclRecordKind::kEntry) return;
  auto it = by_comm_.find(r.call.comm);
  if (it == by_comm_.end()) {
    if (names_.size() == proto::kMaxCommunicators) {
      ++skipped_;
      return;
    }
    names_.push_back(r.call.comm);
    it = by_comm_.emplace(r.call.comm, std::map<uint64_t, proto::LedgerRecord>{}).first;
  }
  ++entries_;
  if (r.local_rank) local_ranks_[r.call.comm] = r.call.rank;
  auto& calls = it->second;
  calls[r.call.comm_seq] = std::move(r.call);  // a ring saved twice gives the same entry twice
  if (calls.size() > kRecentCalls) calls.erase(calls.begin());
}

std::vector<CommLedger> HcclRecords::Comms() const {
  std::vector<CommLedger> out;
  for (const std::string& name : names_) {
    const auto& calls = by_comm_.at(name);
    CommLedger c;
    c.name = name;
    c.from_hccl_records = true;
    c.last_entered = calls.rbegin()->second;
    c.name_cut = c.last_entered.comm_cut;
    c.rank_only = local_ranks_.count(name) != 0;
    c.rank = c.rank_only ? local_ranks_.at(name) : 0;
    for (const auto& [index, call] : calls) c.recent.push_back(call);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace atracectl
