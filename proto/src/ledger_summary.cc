#include "atraced/proto/ledger_summary.h"

#include <algorithm>
#include <charconv>

namespace atraced::proto {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// A decimal of T with no sign, no leading zero, nothing after it.
template <typename T>
std::optional<T> Decimal(std::string_view v) {
  T out{};
  if (v.empty() || v.size() > 20 || (v.size() > 1 && v[0] == '0')) return std::nullopt;
  auto [end, err] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (err != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "KEY=VALUE " at the front of `*rest`: VALUE, and `*rest` past the space.
std::optional<std::string_view> Take(std::string_view* rest, std::string_view key) {
  if (rest->substr(0, key.size()) != key || rest->size() <= key.size() || (*rest)[key.size()] != '=') return std::nullopt;
  const size_t space = rest->find(' ', key.size() + 1);
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view value = rest->substr(key.size() + 1, space - key.size() - 1);
  rest->remove_prefix(space + 1);
  return value;
}

}  // namespace

std::vector<CommunicatorSummary> SummarizeLedger(const LedgerSnapshot& snap, size_t* more) {
  std::vector<CommunicatorSummary> out;
  size_t dropped = 0;
  for (const LedgerRecord& r : snap.records) {
    CommunicatorSummary* s = nullptr;
    for (auto& c : out) {
      if (c.name == r.comm && c.rank_known == r.rank_known && c.rank == r.rank && c.size == r.size) s = &c;
    }
    if (s == nullptr) {
      if (out.size() == kMaxCommunicators) {
        ++dropped;
        continue;
      }
      s = &out.emplace_back();
      s->name = r.comm;
      s->rank_known = r.rank_known;
      s->rank = r.rank;
      s->size = r.size;
      s->last_entered = r;
    }
    ++s->calls;
    if (r.comm_seq >= s->last_entered.comm_seq) s->last_entered = r;
    if (r.completion_ns && (!s->last_completed || r.comm_seq > *s->last_completed)) s->last_completed = r.comm_seq;
  }
  if (more != nullptr) *more = dropped;
  return out;
}

std::vector<CommunicatorSummary> LatestPerName(const std::vector<CommunicatorSummary>& summaries) {
  std::vector<CommunicatorSummary> out;
  for (const CommunicatorSummary& s : summaries) {
    auto same = std::find_if(out.begin(), out.end(), [&](const CommunicatorSummary& c) { return c.name == s.name; });
    if (same == out.end()) {
      out.push_back(s);
    } else if (s.last_entered.index >= same->last_entered.index) {
      *same = s;
    }
  }
  return out;
}

std::string CommunicatorJournalValue(const CommunicatorSummary& c, bool completion_tracked) {
  const LedgerRecord& r = c.last_entered;
  std::string v = "rank=" + (c.rank_known ? std::to_string(c.rank) : std::string("?")) +
                  " size=" + (c.rank_known ? std::to_string(c.size) : std::string("?")) +
                  " seq=" + std::to_string(r.comm_seq) + " op=" + std::to_string(r.op) +
                  " count=" + std::to_string(r.count) + " dtype=" + std::to_string(r.data_type) +
                  " reduce=" + std::to_string(r.reduce_op) + " peer=" + (r.peer ? std::to_string(*r.peer) : "-") +
                  " completed=" + (c.last_completed ? std::to_string(*c.last_completed) : std::string("-")) +
                  " tracked=" + (completion_tracked ? "1" : "0") + " cut=" + (c.last_entered.comm_cut ? "1" : "0") + " name=";
  // The reader keeps at most ATR_LEDGER_COMM_MAX bytes: 4 each escaped, within the bound.
  for (unsigned char ch : std::string_view(c.name).substr(0, ATR_LEDGER_COMM_MAX)) {
    if (ch > 0x20 && ch < 0x7f && ch != '\\') {
      v += static_cast<char>(ch);
    } else {
      v += "\\x";
      v += kHex[ch >> 4];
      v += kHex[ch & 15];
    }
  }
  return v;
}

std::optional<CommunicatorJournal> ParseCommunicatorJournalValue(std::string_view v) {
  if (v.size() > kCommJournalValueMax) return std::nullopt;
  CommunicatorJournal out;
  CommunicatorSummary& c = out.summary;
  LedgerRecord& r = c.last_entered;
  const auto rank = Take(&v, "rank"), size = Take(&v, "size"), seq = Take(&v, "seq"), op = Take(&v, "op"),
             count = Take(&v, "count"), dtype = Take(&v, "dtype"), reduce = Take(&v, "reduce"), peer = Take(&v, "peer"),
             completed = Take(&v, "completed"), tracked = Take(&v, "tracked"), cut = Take(&v, "cut");
  if (!rank || !size || !seq || !op || !count || !dtype || !reduce || !peer || !completed || !tracked || !cut ||
      (*tracked != "0" && *tracked != "1") || (*cut != "0" && *cut != "1") || v.substr(0, 5) != "name=") {
    return std::nullopt;
  }
  v.remove_prefix(5);
  r.comm_cut = *cut == "1";
  if (*rank == "?" && *size == "?") {
    c.rank_known = false;
  } else {
    const auto rk = Decimal<uint32_t>(*rank), sz = Decimal<uint32_t>(*size);
    if (!rk || !sz || *sz == 0 || *rk >= *sz) return std::nullopt;  // as the ledger reader requires
    c.rank_known = true;
    c.rank = *rk;
    c.size = *sz;
  }
  const auto s = Decimal<uint64_t>(*seq), n = Decimal<uint64_t>(*count);
  const auto o = Decimal<uint16_t>(*op);
  const auto d = Decimal<uint8_t>(*dtype), x = Decimal<uint8_t>(*reduce);
  if (!s || *s == 0 || !o || *o == 0 || *o > ATR_LEDGER_OP_MAX || !n || !d || !x) return std::nullopt;
  r.comm_seq = *s;
  r.op = *o;
  r.count = *n;
  r.data_type = *d;
  r.reduce_op = *x;
  if (*peer != "-") {
    const auto p = Decimal<uint32_t>(*peer);
    if (!p || *p == ATR_LEDGER_NO_PEER) return std::nullopt;
    r.peer = *p;
  }
  out.completion_tracked = *tracked == "1";
  if (*completed != "-") {
    const auto m = Decimal<uint64_t>(*completed);
    if (!m) return std::nullopt;
    c.last_completed = *m;
  }
  r.completion_tracked = out.completion_tracked;
  for (size_t i = 0; i < v.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(v[i]);
    if (ch == '\\') {
      if (i + 3 >= v.size() || v[i + 1] != 'x') return std::nullopt;
      const int hi = HexDigit(v[i + 2]), lo = HexDigit(v[i + 3]);
      if (hi < 0 || lo < 0) return std::nullopt;
      c.name += static_cast<char>(hi * 16 + lo);
      i += 3;
    } else if (ch > 0x20 && ch < 0x7f) {
      c.name += static_cast<char>(ch);
    } else {
      return std::nullopt;
    }
    if (c.name.size() > ATR_LEDGER_COMM_MAX) return std::nullopt;
  }
  r.comm = c.name;
  r.rank_known = c.rank_known;
  r.rank = c.rank;
  r.size = c.size;
  return out;
}

}  // namespace atraced::proto
