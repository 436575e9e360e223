#include "journal/hang_entry.h"

#include <charconv>
#include <map>

#include "atraced/proto/codec.h"
#include "atraced/proto/stack_report.h"
#include "files/stack_report.h"
#include "journal/hang_journal_fields.h"

namespace atracectl::journal {
namespace {

using atraced::proto::CheckLabel;
using atraced::proto::LabelKind;

std::string Cut(std::string_view v) { return std::string(v.substr(0, kMaxValue)); }

template <typename T>
std::optional<T> Decimal(std::string_view v, T min, T max) {
  T out{};
  if (v.empty() || v.size() > 20 || (v.size() > 1 && v[0] == '0')) return std::nullopt;
  auto [end, err] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (err != std::errc() || end != v.data() + v.size() || out < min || out > max) return std::nullopt;
  return out;
}

// "PREFIX<n>" with n a decimal below `max` -> n.
std::optional<size_t> Numbered(std::string_view name, std::string_view prefix, size_t max) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  return Decimal<size_t>(name.substr(prefix.size()), 0, max - 1);
}

// The value of a field given exactly once; nullopt when absent or given more than once.
std::optional<std::string_view> Once(const std::vector<JournalField>& fields, std::string_view name) {
  std::optional<std::string_view> found;
  for (const JournalField& f : fields) {
    if (f.name != name) continue;
    if (found) return std::nullopt;
    found = f.value;
  }
  return found;
}

}  // namespace

bool WrittenByAtraced(const std::vector<JournalField>& fields) {
  const auto uid = Once(fields, kTrustedUid);
  if (!uid || *uid != "0") return false;
  const auto unit = Once(fields, kTrustedUnit), comm = Once(fields, kTrustedComm);
  return (unit && *unit == kDaemonUnit) || (comm && *comm == kDaemonComm);
}

ParsedEntry ParseHangEntry(const std::vector<JournalField>& fields, uint64_t realtime_us) {
  ParsedEntry out;
  const auto event = Once(fields, kEvent);
  if (!event || (*event != kEventHang && *event != kEventStart && *event != kEventAged)) return out;
  const bool aged = *event == kEventAged;
  // An ordinary directory aged, or a dump of no job's rank: nothing said of a rank.
  if (aged && (!Once(fields, kDump) || !Once(fields, kJob) || !Once(fields, kRank))) return out;
  if (!WrittenByAtraced(fields)) {
    out.kind = EntryKind::kForged;
    return out;
  }
  HangEntry& e = out.entry;
  e.hang = *event == kEventHang;
  e.aged = aged;
  e.realtime_us = realtime_us;
  const auto fail = [&out](std::string_view field, std::string_view why) {
    out.kind = EntryKind::kMalformed;
    out.problem = std::string(field) + ": " + std::string(why);
    return out;
  };
  std::map<size_t, std::string> frames;
  std::map<size_t, std::pair<std::string, std::string>> records;
  std::map<size_t, std::string_view> comms;
  for (const JournalField& f : fields) {
    if (auto n = Numbered(f.name, kFramePrefix, kMaxFrames)) {
      frames.emplace(*n, Cut(f.value));
    } else if (auto k = Numbered(f.name, kCommunicatorPrefix, atraced::proto::kMaxJournalCommunicators)) {
      comms.emplace(*k, f.value);
    } else if (auto r = Numbered(f.name, kLastRecordPrefix, kMaxLastRecords)) {
      const std::string_view v = f.value.substr(0, kMaxValue);
      const size_t colon = v.find(": ");
      records.emplace(*r, colon == std::string_view::npos
                              ? std::pair<std::string, std::string>("?", std::string(v))
                              : std::pair<std::string, std::string>(std::string(v.substr(0, colon)),
                                                                    std::string(v.substr(colon + 2))));
    }
  }
  for (auto& [n, line] : frames) e.frames.push_back(std::move(line));
  for (auto& [n, rec] : records) e.last_records.push_back(std::move(rec));
  for (const auto& [n, value] : comms) {
    auto comm = atraced::proto::ParseCommunicatorJournalValue(value);
    if (!comm) return fail(std::string(kCommunicatorPrefix) + std::to_string(n), "not a communicator's last calls");
    e.comms.push_back(std::move(*comm));
  }

  const auto job = Once(fields, kJob);
  if (!job || job->empty() || !CheckLabel(LabelKind::kJob, *job).empty()) return fail(kJob, "absent or not a job label");
  e.job = std::string(*job);
  if (const auto rank = Once(fields, kRank)) {
    if (!CheckLabel(LabelKind::kRank, *rank).empty()) return fail(kRank, "not a rank");
    e.rank = Decimal<int64_t>(*rank, 0, INT32_MAX);
  }
  if (const auto world = Once(fields, kWorldSize)) {
    if (!CheckLabel(LabelKind::kWorldSize, *world).empty()) return fail(kWorldSize, "not a world size");
    e.world_size = Decimal<int64_t>(*world, 1, INT32_MAX);
  }
  const auto pid = Once(fields, kPid);
  const auto pid_value = pid ? Decimal<int32_t>(*pid, 1, INT32_MAX) : std::nullopt;
  if (!pid_value) return fail(kPid, "absent or not a process id");
  e.pid = *pid_value;
  if (const auto uid = Once(fields, kUid)) e.uid = Decimal<uint32_t>(*uid, 0, UINT32_MAX);
  if (const auto host = Once(fields, kTrustedHostname)) e.host = Cut(*host);
  if (const auto comm = Once(fields, kComm)) e.comm = Cut(*comm);
  if (aged) {
    const auto reason = Once(fields, kReason);
    if (!reason || (*reason != "count" && *reason != "bytes" && *reason != "keep-free" && *reason != "age" &&
                    *reason != "vacuum")) {
      return fail(kReason, "absent or not a reason atraced ages for");
    }
    const auto dump = Once(fields, kDump);
    if (!dump || (*dump != "dump" && *dump != "hang")) return fail(kDump, "not a kind of dump");
    e.reason = std::string(*reason);
    e.exported = Once(fields, kExported) == std::optional<std::string_view>("1");
    if (const auto path = Once(fields, kPath)) e.path = Cut(*path);
  }
  if (e.hang) {
    if (const auto s = Once(fields, kStallSeconds)) e.stall_s = Decimal<int64_t>(*s, 0, INT64_MAX / 2);
    if (const auto state = Once(fields, kState)) e.state = Cut(*state);
    if (const auto stalled = Once(fields, kStalledPid)) e.stalled_pid = Decimal<int32_t>(*stalled, 1, INT32_MAX).value_or(0);
    if (const auto path = Once(fields, kPath)) e.path = Cut(*path);
    if (const auto refused = Once(fields, kRefused)) e.refused = Cut(*refused);
  } else {
    e.frames.clear();
    e.last_records.clear();
    e.comms.clear();
  }
  out.kind = aged ? EntryKind::kAged : e.hang ? EntryKind::kHang : EntryKind::kStart;
  return out;
}

FramePlace PlaceOfFrame(std::string_view line) {
  FramePlace place;
  line = line.substr(0, kMaxValue);
  // The [stack] section's own reader takes the line and names the frame, so that a frame here
  // and the same frame in a bundle's report have one name (and one class).
  std::string section = "Thread 1 (1, main)\n";
  section.append(line.substr(0, line.find('\n')));
  section += "\n";
  const atraced::proto::StackSection read = atraced::proto::ReadStackSection(section);
  if (read.threads.empty() || read.threads.front().frames.empty()) return place;
  const atraced::proto::StackFrameText& frame = read.threads.front().frames.front();
  place.function = FrameName(frame);
  place.source = frame.source.substr(0, kMaxValue);
  return place;
}

}  // namespace atracectl::journal
