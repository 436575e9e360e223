#include "timeline/trace_events.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <deque>
#include <map>
#include <tuple>

#include "atraced/proto/cann_bin_text.h"
#include "atraced/proto/ledger_reader.h"
#include "files/dir_files.h"
#include "files/dir_origin.h"
#include "common/format.h"
#include "timeline/collective_spans.h"

namespace atracectl {
namespace {

constexpr size_t kMaxFileBytes = 64u << 20;
constexpr int64_t kDeviceTrackBase = 1 << 30;  // device N is process track kDeviceTrackBase + N

constexpr size_t kReportKept = 16 * 1024;  // of a report, what its event shows
constexpr const char* kEventsTrack = "events";  // a process's crash, death, dump and exit

int32_t LocalOffsetNow() {
  const time_t now = ::time(nullptr);
  struct tm tm {};
  ::localtime_r(&now, &tm);
  return static_cast<int32_t>(tm.tm_gmtoff);
}

// "program: X" of a report, or "".
std::string ProgramOf(const std::string& report) {
  const size_t at = report.find("\nprogram: ");
  if (at == std::string::npos) return "";
  const size_t end = report.find('\n', at + 1);
  return report.substr(at + 10, end - at - 10);
}

}  // namespace

bool ForEachRecordLine(std::string_view text, const std::function<bool(int64_t, std::string_view)>& record,
                       std::optional<int32_t> utc_offset_s) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    // The stamp is at the start: sscanf reads a NUL-terminated copy of that much.
    const std::string head(line.substr(0, 64));
    struct tm tm {};
    int ms = 0, us = 0, used = 0;
    if (std::sscanf(head.c_str(), "%4d-%2d-%2d %2d:%2d:%2d.%3d.%3d %n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &us, &used) != 8 ||
        used < 28) {
      continue;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    const time_t t = utc_offset_s ? ::timegm(&tm) - *utc_offset_s : ::mktime(&tm);
    if (t == static_cast<time_t>(-1)) continue;
    if (!record(static_cast<int64_t>(t) * 1000000 + ms * 1000 + us, line.substr(static_cast<size_t>(used)))) return false;
  }
  return true;
}

std::string ObjectOfFile(const std::string& name) {
  std::string object = name.substr(0, name.rfind('.'));
  const size_t tracer_end = object.find("_tracer_");
  if (tracer_end != std::string::npos) object = object.substr(tracer_end + 8);
  return object;
}

std::pair<Mark, std::string_view> ReportMark(const std::string& report) {
  const DirOrigin origin = ReportOrigin(report);
  if (origin.origin == Origin::kCrash) return {Mark::kCrash, "crash"};
  if (origin.IsDeath()) return {Mark::kDeath, "death"};
  if (origin.origin == Origin::kDump) return {Mark::kDump, "stack dump"};
  if (origin.origin == Origin::kHang) return {Mark::kDump, "hang dump"};  // the daemon's own, of a stalled job
  return {Mark::kRecord, "report"};
}

std::string ChromeProcessName(int64_t pid, std::string_view name) {
  return "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":0,\"args\":{\"name\":" +
         JsonString(name) + "}}";
}

std::string ChromeThreadName(int64_t pid, int tid, std::string_view name) {
  return "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"args\":{\"name\":" + JsonString(name) + "}}";
}

std::string ChromeEvent(const TimelineEvent& ev) {
  const bool span = ev.mark == Mark::kCollective && ev.dur >= 0;
  return "{\"name\":" + JsonString(ev.name) +
         (span ? ",\"ph\":\"X\",\"dur\":" + std::to_string(ev.dur) : std::string(",\"ph\":\"i\",\"s\":\"t\"")) +
         ",\"ts\":" + std::to_string(ev.ts) + ",\"pid\":" + std::to_string(ev.pid) + ",\"tid\":" + std::to_string(ev.tid) +
         ",\"args\":{\"text\":" + JsonString(ev.text) + (ev.args.empty() ? "" : ",") + std::string(ev.args) + "}}";
}

void ReadTimeline(const std::vector<atrace::ListEntry>& entries, const std::string& trace_dir, TextBudget& budget,
                  std::vector<std::string>* problems, size_t* files_total, Timeline* out,
                  const std::function<void(size_t, size_t)>& progress) {
  // An event's name and text point into the text of its file, which is kept once (texts): a
  // copy per record would hold the budget twice.
  auto& events = out->events;
  auto& threads = out->threads;
  auto tid_of = [&threads](int64_t pid, const std::string& object) {
    auto [it, added] = threads.try_emplace({pid, object}, 0);
    if (added) {
      int n = 0;
      for (auto at = threads.lower_bound({pid, std::string()}); at != threads.end() && at->first.first == pid; ++at) ++n;
      it->second = n;  // 1, 2, ... in order of appearance within the process
    }
    return it->second;
  };
  // What is held costs the text kept of each file, and each event its bookkeeping: many tiny
  // records are bounded as well as a few huge ones.
  auto keep = [&](TimelineEvent ev) {
    if (!budget.Take(sizeof(TimelineEvent))) return false;
    events.push_back(ev);
    return true;
  };
  auto keep_text = [&](std::string text) -> const std::string& {
    budget.Take(text.size());  // read or decoded within what was left: it fits
    return out->texts.emplace_back(std::move(text));
  };
  const int32_t offset = LocalOffsetNow();
  out->utc_offset_s = offset;
  std::vector<std::vector<std::string>> names;
  *files_total = 0;
  for (const auto& e : entries) {
    names.push_back(SortedNames(trace_dir + "/" + e.path));
    *files_total += names.back().size();
  }
  size_t files_done = 0;
  CollectiveCalls collectives;
  for (size_t i = 0; i < entries.size() && !budget.reached; ++i) {
    const auto& e = entries[i];
    const bool device = e.side == ATRACE_SIDE_DEVICE;
    const int64_t pid = device ? kDeviceTrackBase + e.device_id : e.pid;
    TimelineProcess& process = out->processes[pid];
    if (process.name.empty()) {
      process.pid = device ? 0 : e.pid;
      process.device = device;
      process.name = device ? "device " + std::to_string(e.device_id) : !e.comm.empty() ? e.comm : "pid " + std::to_string(e.pid);
    }
    const std::string dir = trace_dir + "/" + e.path;
    const auto dir_index = static_cast<uint32_t>(i);
    if (e.kind == ATRACE_EVENT_EXIT && budget.Take(sizeof(TimelineEvent))) {
      events.push_back({static_cast<int64_t>(e.created_unix_us), pid, tid_of(pid, kEventsTrack), Mark::kExit, dir_index, "exit",
                        keep_text("exit directory " + e.path + " (the traces kept as the process exited)")});
    }
    for (const std::string& name : names[i]) {
      if (budget.left() == 0) budget.reached = true;
      if (budget.reached) break;
      if (progress) progress(++files_done, *files_total);
      const std::string path = dir + "/" + name;
      std::string bytes;
      bool more = false;
      const bool is_bin = name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
      if (name == atraced::proto::kLedgerFileName) {
        ++budget.files_read;
        if (const atraced::Status st = ReadWhole(path, atraced::proto::kMaxLedgerBytes, &bytes); !st.ok()) {
          problems->push_back(path + ": " + st.message());
          continue;
        }
        std::string why;
        if (!collectives.Add(pid, static_cast<int64_t>(e.created_unix_us),
                             std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), &why)) {
          problems->push_back(path + ": " + why);
        }
        continue;
      }
      if (name.rfind("stackcore_tracer_", 0) == 0) {
        if (is_bin) continue;  // its .txt says it
        ++budget.files_read;
        // A report's kind and program are in its first lines; its event keeps its first 16 KiB.
        if (const atraced::Status st = ReadUpTo(path, kMaxFileBytes, 64 * 1024, &bytes, &more); !st.ok()) {
          problems->push_back(path + ": " + st.message());
          continue;
        }
        const std::string program = ProgramOf(bytes);
        if (!program.empty() && !device && e.comm.empty()) process.name = program;
        const auto [mark, event_name] = ReportMark(bytes);
        bytes.resize(std::min<size_t>({bytes.size(), kReportKept, budget.left()}));
        bytes.shrink_to_fit();
        keep({static_cast<int64_t>(e.created_unix_us), pid, tid_of(pid, kEventsTrack), mark, dir_index, event_name,
              keep_text(std::move(bytes))});
        continue;
      }
      ++budget.files_read;
      // {tracer}_tracer_{object}.txt|.bin: the object names the track and its records.
      const std::string object = ObjectOfFile(name);
      // What is read or decoded of a file is at most what is left of the budget.
      std::string text;
      if (is_bin) {
        if (const atraced::Status st = ReadWhole(path, kMaxFileBytes, &bytes); !st.ok()) {
          problems->push_back(path + ": " + st.message());
          continue;
        }
        auto decoded = atraced::proto::CannBinToText(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), offset,
            budget.left());
        bytes = std::string();
        if (!decoded.ok) {
          problems->push_back(path + ": " + decoded.error);
          continue;
        }
        text = std::move(decoded.text);
        if (decoded.stopped) budget.reached = true;
      } else {
        if (const atraced::Status st = ReadUpTo(path, kMaxFileBytes, budget.left(), &text, &more); !st.ok()) {
          problems->push_back(path + ": " + st.message());
          continue;
        }
        if (more) {  // only the whole lines of what fit
          const size_t line_end = text.rfind('\n');
          text.resize(line_end == std::string::npos ? 0 : line_end + 1);
          budget.reached = true;
        }
      }
      const int tid = tid_of(pid, object);
      const std::string_view event_name = threads.find({pid, object})->first.second;
      ForEachRecordLine(keep_text(std::move(text)), [&](int64_t ts, std::string_view record) {
        return keep({ts, pid, tid, Mark::kRecord, dir_index, event_name, record});
      });
    }
  }
  // The calls of each process's latest ledger, on its communicators' tracks.
  collectives.ForEach([&](int64_t pid, const CollectiveCall& call) {
    if (!budget.Take(call.track.size() + call.name.size() + call.text.size() + call.args.size())) return false;
    const int tid = tid_of(pid, call.track);
    return keep({call.ts, pid, tid, Mark::kCollective, 0, out->texts.emplace_back(call.name),
                 out->texts.emplace_back(call.text), call.dur, out->texts.emplace_back(call.args)});
  });
  // By time, then by track and text, so that the same record kept twice sits beside itself;
  // of each run of the same record, those of its first directory are kept.
  auto key = [](const TimelineEvent& ev) { return std::tie(ev.ts, ev.pid, ev.tid, ev.mark, ev.text); };
  std::sort(events.begin(), events.end(), [&key](const TimelineEvent& a, const TimelineEvent& b) {
    return std::tuple_cat(key(a), std::tie(a.dir)) < std::tuple_cat(key(b), std::tie(b.dir));
  });
  size_t kept = 0;
  for (size_t run = 0; run < events.size();) {
    size_t end = run + 1;
    while (end < events.size() && key(events[end]) == key(events[run])) ++end;
    for (size_t k = run; k < end; ++k) {
      if (events[k].dir == events[run].dir) events[kept++] = events[k];
    }
    run = end;
  }
  out->duplicates = events.size() - kept;
  events.resize(kept);
}

void WriteChromeTrace(const Timeline& timeline, const std::function<void(std::string_view)>& put) {
  put("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  bool first = true;
  auto add = [&put, &first](const std::string& line) {
    if (!first) put(",\n");
    put(line);
    first = false;
  };
  for (const auto& [pid, process] : timeline.processes) add(ChromeProcessName(pid, process.name));
  for (const auto& [key, tid] : timeline.threads) add(ChromeThreadName(key.first, tid, key.second));
  for (const TimelineEvent& ev : timeline.events) add(ChromeEvent(ev));
  put("\n]}\n");
}

}  // namespace atracectl
