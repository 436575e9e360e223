#include "atraced/store/names.h"

#include "atraced/proto/ledger_reader.h"

#include <charconv>
#include <limits>

#include "atraced/store/trace_time.h"

namespace atraced {
namespace {

// A cursor over a name being parsed. Every Take* either consumes and succeeds, or fails and
// the whole parse fails: partial matches never count.
class NameReader {
 public:
  explicit NameReader(std::string_view text) : rest_(text) {}

  bool Literal(std::string_view lit) {
    if (rest_.substr(0, lit.size()) != lit) return false;
    rest_.remove_prefix(lit.size());
    return true;
  }
  // Decimal without sign or leading zeros (so each number has exactly one spelling).
  template <class Int>
  bool Number(Int* out) {
    size_t n = 0;
    while (n < rest_.size() && rest_[n] >= '0' && rest_[n] <= '9') ++n;
    if (n == 0 || (n > 1 && rest_[0] == '0')) return false;
    auto [ptr, ec] = std::from_chars(rest_.data(), rest_.data() + n, *out);
    if (ec != std::errc() || ptr != rest_.data() + n) return false;
    rest_.remove_prefix(n);
    return true;
  }
  bool Time(std::string* out) {
    if (rest_.size() < kTraceTimeLength) return false;
    std::string_view t = rest_.substr(0, kTraceTimeLength);
    if (!IsValidTraceTime(t)) return false;
    *out = std::string(t);
    rest_.remove_prefix(kTraceTimeLength);
    return true;
  }
  // Lower-case letters up to (not including) the next '_'.
  bool Word(std::string* out) {
    size_t n = 0;
    while (n < rest_.size() && rest_[n] >= 'a' && rest_[n] <= 'z') ++n;
    if (n == 0) return false;
    *out = std::string(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return true;
  }
  std::string_view rest() const { return rest_; }
  bool AtEnd() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

bool PositiveId(int32_t v) { return v > 0; }

}  // namespace

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kSchedule: return "schedule";
    case EventKind::kStackcore: return "stackcore";
    case EventKind::kExit: return "exit";
  }
  return "?";
}

std::optional<EventKind> ParseEventKind(std::string_view name) {
  for (EventKind k : {EventKind::kSchedule, EventKind::kStackcore, EventKind::kExit}) {
    if (EventKindName(k) == name) return k;
  }
  return std::nullopt;
}

std::string_view SideName(Side side) { return side == Side::kDevice ? "device" : "host"; }

// Appends the decimal form of `v`, as std::to_string spells it, without a temporary string.
static void AppendNumber(std::string& out, int64_t v) {
  char digits[24];
  auto r = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, r.ptr);
}

// The names below are formatted on every EVENT_BEGIN and FILE_OPEN: each is built in one
// string reserved up front (one allocation) rather than by a chain of operator+.
std::string FormatProcessDirName(const ProcessDirName& n) {
  std::string out;
  out.reserve(sizeof "trace_" + 2 * 12 + n.time.size());
  out.append("trace_");
  AppendNumber(out, n.pgid);
  out += '_';
  AppendNumber(out, n.pid);
  out += '_';
  out.append(n.time);
  return out;
}

std::optional<ProcessDirName> ParseProcessDirName(std::string_view text) {
  NameReader r(text);
  ProcessDirName n;
  if (r.Literal("trace_") && r.Number(&n.pgid) && r.Literal("_") && r.Number(&n.pid) &&
      r.Literal("_") && r.Time(&n.time) && r.AtEnd() && PositiveId(n.pgid) && PositiveId(n.pid)) {
    return n;
  }
  return std::nullopt;
}

std::string FormatEventDirName(const EventDirName& n) {
  const std::string_view kind = EventKindName(n.kind);
  std::string out;
  out.reserve(kind.size() + sizeof "_event_" + 12 + n.time.size());
  out.append(kind);
  out.append("_event_");
  AppendNumber(out, n.pid);
  out += '_';
  out.append(n.time);
  return out;
}

std::optional<EventDirName> ParseEventDirName(std::string_view text) {
  NameReader r(text);
  std::string kind;
  EventDirName n;
  if (!(r.Word(&kind) && r.Literal("_event_") && r.Number(&n.pid) && r.Literal("_") &&
        r.Time(&n.time) && r.AtEnd() && PositiveId(n.pid))) {
    return std::nullopt;
  }
  auto k = ParseEventKind(kind);
  if (!k) return std::nullopt;
  n.kind = *k;
  return n;
}

std::string FormatObjectFileName(const ObjectFileName& n) {
  std::string out;
  out.reserve(n.tracer.size() + sizeof "_tracer_" + n.object.size() + 4);
  out.append(n.tracer).append("_tracer_").append(n.object).append(n.binary ? ".bin" : ".txt");
  return out;
}

std::optional<ObjectFileName> ParseObjectFileName(std::string_view text) {
  NameReader r(text);
  ObjectFileName n;
  // Object dumps come from the schedule tracer only (CANN implements no other); the
  // stackcore tracer names its one file in the stackcore form.
  if (!(r.Word(&n.tracer) && n.tracer == "schedule" && r.Literal("_tracer_"))) return std::nullopt;
  std::string_view rest = r.rest();
  if (rest.size() < 4) return std::nullopt;
  std::string_view suffix = rest.substr(rest.size() - 4);
  if (suffix == ".bin") {
    n.binary = true;
  } else if (suffix != ".txt") {
    return std::nullopt;
  }
  n.object = std::string(rest.substr(0, rest.size() - 4));
  if (!IsSafeName(n.object) || n.object.size() > kMaxObjectName) return std::nullopt;
  return n;
}

std::string FormatTsFileName(uint32_t device_id) {
  return FormatObjectFileName({"schedule", "ts_" + std::to_string(device_id), false});
}

std::string FormatStackcoreFileName(const StackcoreFileName& n) {
  return "stackcore_tracer_" + std::to_string(n.signo) + "_" + std::to_string(n.tid) + "_" +
         n.program + "_" + n.time + (n.binary ? ".bin" : ".txt");
}

std::optional<StackcoreFileName> ParseStackcoreFileName(std::string_view text) {
  NameReader r(text);
  StackcoreFileName n;
  if (!(r.Literal("stackcore_tracer_") && r.Number(&n.signo) && r.Literal("_") &&
        r.Number(&n.tid) && r.Literal("_"))) {
    return std::nullopt;
  }
  // The program name may itself contain '_', so the time is anchored at the end.
  std::string_view rest = r.rest();
  constexpr size_t kTail = 1 + kTraceTimeLength + 4;  // "_" time ".txt"
  if (rest.size() <= kTail) return std::nullopt;
  std::string_view tail = rest.substr(rest.size() - kTail);
  if (tail[0] != '_' || (tail.substr(kTail - 4) != ".txt" && tail.substr(kTail - 4) != ".bin")) return std::nullopt;
  n.binary = tail.substr(kTail - 4) == ".bin";
  std::string_view time = tail.substr(1, kTraceTimeLength);
  if (!IsValidTraceTime(time)) return std::nullopt;
  n.time = std::string(time);
  n.program = std::string(rest.substr(0, rest.size() - kTail));
  if (!IsSafeName(n.program) || n.program.size() > kMaxProgramName || n.signo <= 0 ||
      n.tid <= 0) {
    return std::nullopt;
  }
  return n;
}

bool IsTraceFileName(std::string_view text) {
  return ParseStackcoreFileName(text).has_value() || ParseObjectFileName(text).has_value() ||
         text == proto::kLedgerFileName;
}

TraceFileName TraceFileName::Ledger() { return TraceFileName(std::string(proto::kLedgerFileName)); }

std::string FormatMarkerName(const EventMarker& m) {
  return ".atraced_" + std::to_string(m.seq) + "_" + std::string(SideName(m.side)) + "_" +
         std::to_string(m.device_id) + "_" + std::to_string(m.uid) + "_" +
         std::to_string(m.created_us);
}

std::optional<EventMarker> ParseMarkerName(std::string_view text) {
  NameReader r(text);
  EventMarker m;
  std::string side;
  if (!(r.Literal(".atraced_") && r.Number(&m.seq) && r.Literal("_") && r.Word(&side) &&
        r.Literal("_") && r.Number(&m.device_id) && r.Literal("_") && r.Number(&m.uid) &&
        r.Literal("_") && r.Number(&m.created_us) && r.AtEnd() && m.seq > 0)) {
    return std::nullopt;
  }
  if (side == "host") {
    m.side = Side::kHost;
  } else if (side == "device") {
    m.side = Side::kDevice;
  } else {
    return std::nullopt;
  }
  return m;
}

std::string FormatAsideName(uint64_t serial, std::string_view event_dir) {
  std::string name = std::to_string(serial);
  name.append("_").append(event_dir);
  return name;
}

std::optional<uint64_t> ParseAsideSerial(std::string_view text) {
  NameReader r(text);
  uint64_t serial = 0;
  if (r.Number(&serial) && r.Literal("_")) return serial;
  return std::nullopt;
}

std::string FormatStagingName(uint64_t seq) { return ".atraced_staging_" + std::to_string(seq); }

std::optional<uint64_t> ParseStagingName(std::string_view text) {
  NameReader r(text);
  uint64_t seq = 0;
  if (r.Literal(".atraced_staging_") && r.Number(&seq) && r.AtEnd()) return seq;
  return std::nullopt;
}

}  // namespace atraced
