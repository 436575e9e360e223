#include "atraced/store/order_log.h"

#include <charconv>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "atraced/base/name_rule.h"
#include "atraced/store/names.h"

namespace atraced {
namespace {

constexpr size_t kMaxProblemsKept = 8;
constexpr size_t kMaxCommInLog = 63;  // ATR_MAX_PROGRAM_NAME

char ClassLetter(AgeClass c) {
  switch (c) {
    case AgeClass::kHost: return 'h';
    case AgeClass::kDevice: return 'd';
    case AgeClass::kExit: return 'e';
  }
  return '?';
}

bool ParseClass(std::string_view s, AgeClass* c) {
  if (s == "h") *c = AgeClass::kHost;
  else if (s == "d") *c = AgeClass::kDevice;
  else if (s == "e") *c = AgeClass::kExit;
  else return false;
  return true;
}

// Plain decimal, the whole token, no sign.
template <class Int>
bool ParseNumber(std::string_view s, Int* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string_view> SplitSpaces(std::string_view line) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    parts.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// "+ seq class device uid created_us proc/event" -> entry, or false.
bool ParseCreated(const std::vector<std::string_view>& f, OrderEntry* e, std::string* why) {
  if (f.size() != 7) return *why = "expected 7 fields", false;
  if (!ParseNumber(f[1], &e->seq) || e->seq == 0) return *why = "bad sequence", false;
  if (!ParseClass(f[2], &e->cls)) return *why = "bad class", false;
  if (!ParseNumber(f[3], &e->device_id) || !ParseNumber(f[4], &e->uid) || !ParseNumber(f[5], &e->created_us)) {
    return *why = "bad number", false;
  }
  std::string_view path = f[6];
  size_t slash = path.find('/');
  if (slash == std::string_view::npos) return *why = "path is not <process dir>/<event dir>", false;
  std::string_view proc = path.substr(0, slash);
  std::string_view event = path.substr(slash + 1);
  auto ev = ParseEventDirName(event);
  if (!ParseProcessDirName(proc) || !ev) return *why = "path is not <process dir>/<event dir>", false;
  if ((ev->kind == EventKind::kExit) != (e->cls == AgeClass::kExit)) return *why = "class does not match the event", false;
  e->process_dir = std::string(proc);
  e->event_dir = std::string(event);
  return true;
}

// "job=J" "rank=R" "world=W", each at most once, each a valid label (proto::CheckLabel).
bool ParseLabels(const std::vector<std::string_view>& fields, proto::Labels* out) {
  for (std::string_view f : fields) {
    const size_t eq = f.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = f.substr(0, eq), value = f.substr(eq + 1);
    std::string* slot = key == "job" ? &out->job : key == "rank" ? &out->rank : key == "world" ? &out->world_size : nullptr;
    const proto::LabelKind kind = key == "job" ? proto::LabelKind::kJob : key == "rank" ? proto::LabelKind::kRank
                                                                                        : proto::LabelKind::kWorldSize;
    if (slot == nullptr || !slot->empty() || value.empty() || !proto::CheckLabel(kind, value).empty()) return false;
    *slot = std::string(value);
  }
  return true;
}

std::optional<AgingReason> ParseReason(std::string_view s) {
  for (AgingReason r : kAllAgingReasons) {
    if (s == AgingReasonName(r)) return r;
  }
  return std::nullopt;
}

// "a aged_us reason uid dump|hang 0|1 proc/event [labels]" -> aged, or false.
bool ParseAged(const std::vector<std::string_view>& f, AgedDump* a, std::string* why) {
  if (f.size() < 7 || f.size() > 10) return *why = "bad aged-dump record", false;
  const auto reason = ParseReason(f[2]);
  if (!ParseNumber(f[1], &a->aged_us) || !reason || !ParseNumber(f[3], &a->uid) ||
      (f[4] != "dump" && f[4] != "hang") || (f[5] != "0" && f[5] != "1")) {
    return *why = "bad aged-dump record", false;
  }
  a->reason = *reason;
  a->dump = f[4] == "hang" ? DumpKind::kHang : DumpKind::kOperator;
  a->exported = f[5] == "1";
  const std::string_view path = f[6];
  const size_t slash = path.find('/');
  if (slash == std::string_view::npos || !ParseProcessDirName(path.substr(0, slash)) ||
      !ParseEventDirName(path.substr(slash + 1))) {
    return *why = "aged-dump path is not <process dir>/<event dir>", false;
  }
  a->process_dir = std::string(path.substr(0, slash));
  a->event_dir = std::string(path.substr(slash + 1));
  if (!ParseLabels({f.begin() + 7, f.end()}, &a->labels)) return *why = "bad aged-dump labels", false;
  return true;
}

void AppendLabels(const proto::Labels& labels, std::string& out) {
  for (auto [key, value] : {std::pair{" job=", &labels.job}, std::pair{" rank=", &labels.rank},
                            std::pair{" world=", &labels.world_size}}) {
    if (value->empty()) continue;
    out += key;
    out += *value;
  }
}

constexpr size_t kMaxGrantStamp = 64;

// A grant stamp's characters (FileSystem::GrantStamp): no space, nothing to escape.
bool IsStampText(std::string_view s) {
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '=' || c == ',')) return false;
  }
  return true;
}

void AppendSeqRecord(char type, uint64_t seq, std::string& out) {
  out += type;
  out += ' ';
  out += std::to_string(seq);
  out += '\n';
}

}  // namespace

void AppendCreated(const OrderEntry& e, std::string& out) {
  out += "+ ";
  out += std::to_string(e.seq);
  out += ' ';
  out += ClassLetter(e.cls);
  out += ' ';
  out += std::to_string(e.device_id);
  out += ' ';
  out += std::to_string(e.uid);
  out += ' ';
  out += std::to_string(e.created_us < 0 ? 0 : e.created_us);
  out += ' ';
  out += e.process_dir;
  out += '/';
  out += e.event_dir;
  out += '\n';
  if (!e.comm.empty()) {
    out += "c ";
    out += std::to_string(e.seq);
    out += ' ';
    out += e.comm;
    out += '\n';
  }
  if (!e.labels.empty()) {
    out += "l ";
    out += std::to_string(e.seq);
    AppendLabels(e.labels, out);
    out += '\n';
  }
  if (e.dump != DumpKind::kNone) {
    out += "o ";
    out += std::to_string(e.seq);
    out += e.dump == DumpKind::kHang ? " hang\n" : " dump\n";
    if (e.exported) AppendExported(e.seq, out);
  }
  if (e.saved) AppendSeqRecord('s', e.seq, out);
  if (e.incomplete) AppendSaving(e.seq, out);
}

void AppendSaving(uint64_t seq, std::string& out) { AppendSeqRecord('p', seq, out); }
void AppendSaved(uint64_t seq, std::string& out) { AppendSeqRecord('d', seq, out); }
void AppendExported(uint64_t seq, std::string& out) { AppendSeqRecord('x', seq, out); }

void AppendRemoved(uint64_t seq, std::string& out) { AppendSeqRecord('-', seq, out); }

void AppendAged(const AgedDump& a, std::string& out) {
  out += "a ";
  out += std::to_string(a.aged_us < 0 ? 0 : a.aged_us);
  out += ' ';
  out += AgingReasonName(a.reason);
  out += ' ';
  out += std::to_string(a.uid);
  out += a.dump == DumpKind::kHang ? " hang " : " dump ";
  out += a.exported ? "1 " : "0 ";
  out += a.process_dir;
  out += '/';
  out += a.event_dir;
  AppendLabels(a.labels, out);
  out += '\n';
}

void AppendGrantStamp(const std::string& stamp, std::string& out) {
  out += "g ";
  out += stamp.empty() ? "-" : stamp;
  out += '\n';
}

OrderLogReplay ReplayOrderLog(std::string_view text) {
  OrderLogReplay r;
  auto problem = [&r](size_t line_no, std::string what) {
    ++r.rejected;
    if (r.problems.size() < kMaxProblemsKept) r.problems.push_back("line " + std::to_string(line_no) + ": " + what);
  };
  // seq -> index in `entries`; entries keep file order, which is sequence order.
  std::vector<OrderEntry> entries;
  std::vector<uint8_t> state;  // 0 live, 1 removing
  std::unordered_map<uint64_t, size_t> by_seq;
  std::unordered_map<std::string, size_t> live_by_path;
  uint64_t last_seq = 0;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    ++line_no;
    if (nl == std::string_view::npos) break;  // a torn last record: the write never finished
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    auto fields = SplitSpaces(line);
    std::string why;
    if (fields[0] == "+") {
      OrderEntry e;
      if (!ParseCreated(fields, &e, &why)) {
        problem(line_no, why);
        continue;
      }
      if (e.seq <= last_seq) {
        problem(line_no, "sequence " + std::to_string(e.seq) + " does not increase");
        continue;
      }
      std::string path = e.process_dir + "/" + e.event_dir;
      if (live_by_path.count(path)) {
        problem(line_no, "path already live: " + path);
        continue;
      }
      last_seq = e.seq;
      by_seq[e.seq] = entries.size();
      live_by_path[path] = entries.size();
      entries.push_back(std::move(e));
      state.push_back(0);
      ++r.records;
    } else if (fields[0] == "c") {
      uint64_t seq = 0;
      if (fields.size() != 3 || !ParseNumber(fields[1], &seq) || fields[2].size() > kMaxCommInLog ||
          !IsSafeName(fields[2])) {
        problem(line_no, "bad program record");
        continue;
      }
      auto it = by_seq.find(seq);
      if (it == by_seq.end() || state[it->second] != 0 || !entries[it->second].comm.empty()) {
        problem(line_no, "program of unknown sequence " + std::to_string(seq));
        continue;
      }
      entries[it->second].comm = std::string(fields[2]);
      ++r.records;
    } else if (fields[0] == "l") {
      uint64_t seq = 0;
      proto::Labels labels;
      if (fields.size() < 3 || fields.size() > 5 || !ParseNumber(fields[1], &seq) ||
          !ParseLabels({fields.begin() + 2, fields.end()}, &labels)) {
        problem(line_no, "bad labels record");
        continue;
      }
      auto it = by_seq.find(seq);
      if (it == by_seq.end() || state[it->second] != 0 || !entries[it->second].labels.empty()) {
        problem(line_no, "labels of unknown sequence " + std::to_string(seq));
        continue;
      }
      entries[it->second].labels = std::move(labels);
      ++r.records;
    } else if (fields[0] == "o") {
      uint64_t seq = 0;
      if (fields.size() != 3 || !ParseNumber(fields[1], &seq) || (fields[2] != "dump" && fields[2] != "hang")) {
        problem(line_no, "bad dump record");
        continue;
      }
      auto it = by_seq.find(seq);
      if (it == by_seq.end() || state[it->second] != 0 || entries[it->second].dump != DumpKind::kNone) {
        problem(line_no, "dump record of unknown sequence " + std::to_string(seq));
        continue;
      }
      entries[it->second].dump = fields[2] == "hang" ? DumpKind::kHang : DumpKind::kOperator;
      ++r.records;
    } else if (fields[0] == "x") {
      uint64_t seq = 0;
      if (fields.size() != 2 || !ParseNumber(fields[1], &seq)) {
        problem(line_no, "bad export record");
        continue;
      }
      auto it = by_seq.find(seq);
      if (it == by_seq.end() || state[it->second] != 0 || entries[it->second].dump == DumpKind::kNone ||
          entries[it->second].exported) {
        problem(line_no, "export record of no dump: sequence " + std::to_string(seq));
        continue;
      }
      entries[it->second].exported = true;
    } else if (fields[0] == "s") {
      uint64_t seq = 0;
      if (fields.size() != 2 || !ParseNumber(fields[1], &seq)) {
        problem(line_no, "bad made-by-a-save record");
        continue;
      }
      auto it = by_seq.find(seq);
      if (it == by_seq.end() || state[it->second] != 0 || entries[it->second].saved) {
        problem(line_no, "made-by-a-save record of unknown sequence " + std::to_string(seq));
        continue;
      }
      entries[it->second].saved = true;
      ++r.records;
    } else if (fields[0] == "p" || fields[0] == "d") {
      const bool saving = fields[0] == "p";
      uint64_t seq = 0;
      if (fields.size() != 2 || !ParseNumber(fields[1], &seq)) {
        problem(line_no, saving ? "bad save record" : "bad saved record");
        continue;
      }
      auto it = by_seq.find(seq);
      if (it == by_seq.end() || state[it->second] != 0) {
        problem(line_no, "save record of unknown sequence " + std::to_string(seq));
        continue;
      }
      OrderEntry& e = entries[it->second];
      if (e.incomplete == saving) {
        problem(line_no, saving ? "save of sequence " + std::to_string(seq) + " already pending" :
                                  "completion of sequence " + std::to_string(seq) + " with no save pending");
        continue;
      }
      e.incomplete = saving;
      ++r.records;
    } else if (fields[0] == "g") {
      if (fields.size() != 2 || fields[1].empty() || fields[1].size() > kMaxGrantStamp || !IsStampText(fields[1])) {
        problem(line_no, "bad grant record");
        continue;
      }
      r.grant_stamp = fields[1] == "-" ? "" : std::string(fields[1]);
      ++r.records;
    } else if (fields[0] == "a") {
      AgedDump aged;
      if (!ParseAged(fields, &aged, &why)) {
        problem(line_no, why);
        continue;
      }
      r.aged.push_back(std::move(aged));
      ++r.records;
    } else if (fields[0] == "-") {
      uint64_t seq = 0;
      if (fields.size() != 2 || !ParseNumber(fields[1], &seq)) {
        problem(line_no, "bad removal record");
        continue;
      }
      auto it = by_seq.find(seq);
      if (it == by_seq.end() || state[it->second] != 0) {
        problem(line_no, "removal of unknown sequence " + std::to_string(seq));
        continue;
      }
      state[it->second] = 1;
      const OrderEntry& e = entries[it->second];
      live_by_path.erase(e.process_dir + "/" + e.event_dir);
      ++r.records;
    } else {
      problem(line_no, "unknown record");
    }
  }
  if (r.aged.size() > kMaxAgedDumps) r.aged.erase(r.aged.begin(), r.aged.end() - kMaxAgedDumps);  // the newest
  for (size_t i = 0; i < entries.size(); ++i) {
    (state[i] == 0 ? r.live : r.removing).push_back(std::move(entries[i]));
  }
  return r;
}

}  // namespace atraced
