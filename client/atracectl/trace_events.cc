#include "trace_events.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <deque>
#include <map>
#include <tuple>

#include "atraced/proto/cann_bin_text.h"
#include "dir_files.h"
#include "format.h"

namespace atracectl {
namespace {

constexpr size_t kMaxFileBytes = 64u << 20;
constexpr int64_t kDeviceTrackBase = 1 << 30;  // device N is process track kDeviceTrackBase + N

// An event's name and text point into the text of its file, which is kept once (Texts): a
// copy per record would hold the budget twice.
struct Event {
  int64_t ts = 0;
  int64_t pid = 0;
  int tid = 0;
  std::string_view name, text;
};
using Texts = std::deque<std::string>;  // appended to only: what events point into stays put

std::string_view FirstWord(std::string_view text) {
  const std::string_view w = text.substr(0, text.find_first_of(" \t:,=[("));
  return w.empty() ? std::string_view("record") : w;
}

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

bool ForEachRecordLine(std::string_view text, const std::function<bool(int64_t, std::string_view)>& record) {
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
    const time_t t = ::mktime(&tm);
    if (t == static_cast<time_t>(-1)) continue;
    if (!record(static_cast<int64_t>(t) * 1000000 + ms * 1000 + us, line.substr(static_cast<size_t>(used)))) return false;
  }
  return true;
}

void WriteChromeTrace(const std::vector<atrace::ListEntry>& entries, const std::string& trace_dir, TextBudget& budget,
                      std::vector<std::string>* problems, size_t* files_total,
                      const std::function<void(std::string_view)>& put) {
  std::deque<Event> events;  // grows without a copy of what it holds
  Texts texts;
  std::map<int64_t, std::string> process_names;
  std::map<std::pair<int64_t, std::string>, int> threads;  // (process track, object) -> tid
  auto tid_of = [&threads](int64_t pid, const std::string& object) {
    auto [it, added] = threads.try_emplace({pid, object}, 0);
    if (added) {
      int n = 0;
      for (const auto& [key, tid] : threads) n += key.first == pid ? 1 : 0;
      it->second = n;  // 1, 2, ... in order of appearance within the process
    }
    return it->second;
  };
  // What is held costs the text kept of each file, and each event its bookkeeping: many tiny
  // records are bounded as well as a few huge ones.
  auto keep = [&](Event ev) {
    if (!budget.Take(sizeof(Event))) return false;
    events.push_back(ev);
    return true;
  };
  auto keep_text = [&](std::string text) -> const std::string& {
    budget.Take(text.size());  // read or decoded within what was left: it fits
    return texts.emplace_back(std::move(text));
  };
  const int32_t offset = LocalOffsetNow();
  std::vector<std::vector<std::string>> names;
  *files_total = 0;
  for (const auto& e : entries) {
    names.push_back(SortedNames(trace_dir + "/" + e.path));
    *files_total += names.back().size();
  }
  for (size_t i = 0; i < entries.size() && !budget.reached; ++i) {
    const auto& e = entries[i];
    const bool device = e.side == ATRACE_SIDE_DEVICE;
    const int64_t pid = device ? kDeviceTrackBase + e.device_id : e.pid;
    if (device) process_names[pid] = "device " + std::to_string(e.device_id);
    if (!process_names.count(pid)) process_names[pid] = "pid " + std::to_string(e.pid);
    const std::string dir = trace_dir + "/" + e.path;
    for (const std::string& name : names[i]) {
      if (budget.left() == 0) budget.reached = true;
      if (budget.reached) break;
      const std::string path = dir + "/" + name;
      std::string bytes, why;
      bool more = false;
      const bool is_bin = name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
      if (name.rfind("stackcore_tracer_", 0) == 0) {
        if (is_bin) continue;  // its .txt says it
        ++budget.files_read;
        // A report's kind and program are in its first lines; its event keeps the first 2 KiB.
        if (!ReadUpTo(path, kMaxFileBytes, 64 * 1024, &bytes, &more, &why)) {
          problems->push_back(path + ": " + why);
          continue;
        }
        const std::string program = ProgramOf(bytes);
        if (!program.empty() && !device) process_names[pid] = program + " (" + std::to_string(e.pid) + ")";
        const std::string_view kind = bytes.find("asked for its stacks") != std::string::npos ? "stack dump"
                                      : bytes.find("caught a fatal signal") != std::string::npos ? "crash"
                                                                                                 : "death";
        bytes.resize(std::min<size_t>({bytes.size(), 2048, budget.left()}));
        bytes.shrink_to_fit();
        keep({static_cast<int64_t>(e.created_unix_us), pid, tid_of(pid, "reports"), kind, keep_text(std::move(bytes))});
        continue;
      }
      ++budget.files_read;
      std::string object = name;
      const std::string prefix = "schedule_tracer_";
      if (object.rfind(prefix, 0) == 0) object = object.substr(prefix.size());
      // What is read or decoded of a file is at most what is left of the budget.
      std::string text;
      if (is_bin) {
        if (!ReadWhole(path, kMaxFileBytes, &bytes, &why)) {
          problems->push_back(path + ": " + why);
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
        if (!ReadUpTo(path, kMaxFileBytes, budget.left(), &text, &more, &why)) {
          problems->push_back(path + ": " + why);
          continue;
        }
        if (more) {  // only the whole lines of what fit
          const size_t line_end = text.rfind('\n');
          text.resize(line_end == std::string::npos ? 0 : line_end + 1);
          budget.reached = true;
        }
      }
      object = object.substr(0, object.rfind('.'));
      const int tid = tid_of(pid, object);
      ForEachRecordLine(keep_text(std::move(text)), [&](int64_t ts, std::string_view record) {
        return keep({ts, pid, tid, FirstWord(record), record});
      });
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
  put("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  bool first = true;
  auto add = [&put, &first](const std::string& line) {
    if (!first) put(",\n");
    put(line);
    first = false;
  };
  for (const auto& [pid, name] : process_names) {
    add("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
        ",\"tid\":0,\"args\":{\"name\":" + JsonString(name) + "}}");
  }
  for (const auto& [key, tid] : threads) {
    add("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(key.first) +
        ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":" + JsonString(key.second) + "}}");
  }
  for (const Event& ev : events) {
    add("{\"name\":" + JsonString(ev.name) + ",\"ph\":\"i\",\"s\":\"t\",\"ts\":" + std::to_string(ev.ts) +
        ",\"pid\":" + std::to_string(ev.pid) + ",\"tid\":" + std::to_string(ev.tid) +
        ",\"args\":{\"text\":" + JsonString(ev.text) + "}}");
  }
  put("\n]}\n");
}

}  // namespace atracectl
