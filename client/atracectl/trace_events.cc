#include "trace_events.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <sstream>
#include <tuple>

#include "atraced/proto/cann_bin_text.h"
#include "dir_files.h"
#include "format.h"

namespace atracectl {
namespace {

constexpr size_t kMaxFileBytes = 64u << 20;
constexpr int64_t kDeviceTrackBase = 1 << 30;  // device N is process track kDeviceTrackBase + N

struct Event {
  int64_t ts = 0;
  int64_t pid = 0;
  int tid = 0;
  std::string name, text;
};

std::string FirstWord(const std::string& text) {
  const size_t end = text.find_first_of(" \t:,=[(");
  std::string w = text.substr(0, end);
  return w.empty() ? "record" : w;
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

std::vector<TraceRecord> ParseRecordLines(const std::string& text) {
  std::vector<TraceRecord> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    struct tm tm {};
    int ms = 0, us = 0, used = 0;
    if (std::sscanf(line.c_str(), "%4d-%2d-%2d %2d:%2d:%2d.%3d.%3d %n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &us, &used) != 8 ||
        used < 28) {
      continue;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    const time_t t = ::mktime(&tm);
    if (t == static_cast<time_t>(-1)) continue;
    out.push_back({static_cast<int64_t>(t) * 1000000 + ms * 1000 + us, line.substr(static_cast<size_t>(used))});
  }
  return out;
}

std::string ChromeTraceJson(const std::vector<atrace::ListEntry>& entries, const std::string& trace_dir,
                            std::vector<std::string>* problems) {
  std::vector<Event> events;
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
  const int32_t offset = LocalOffsetNow();
  for (const auto& e : entries) {
    const bool device = e.side == ATRACE_SIDE_DEVICE;
    const int64_t pid = device ? kDeviceTrackBase + e.device_id : e.pid;
    if (device) process_names[pid] = "device " + std::to_string(e.device_id);
    const std::string dir = trace_dir + "/" + e.path;
    for (const std::string& name : SortedNames(dir)) {
      std::string bytes, why;
      if (!ReadWhole(dir + "/" + name, kMaxFileBytes, &bytes, &why)) {
        problems->push_back(dir + "/" + name + ": " + why);
        continue;
      }
      if (name.rfind("stackcore_tracer_", 0) == 0) {
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0) continue;  // its .txt says it
        const std::string program = ProgramOf(bytes);
        if (!program.empty() && !device) process_names[pid] = program + " (" + std::to_string(e.pid) + ")";
        const std::string kind = bytes.find("asked for its stacks") != std::string::npos ? "stack dump"
                                 : bytes.find("caught a fatal signal") != std::string::npos ? "crash"
                                                                                            : "death";
        events.push_back({static_cast<int64_t>(e.created_unix_us), pid, tid_of(pid, "reports"), kind,
                          bytes.substr(0, std::min<size_t>(bytes.size(), 2048))});
        continue;
      }
      std::string object = name;
      const std::string prefix = "schedule_tracer_";
      if (object.rfind(prefix, 0) == 0) object = object.substr(prefix.size());
      std::string text = bytes;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0) {
        const auto decoded = atraced::proto::CannBinToText(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), offset);
        if (!decoded.ok) {
          problems->push_back(dir + "/" + name + ": " + decoded.error);
          continue;
        }
        text = decoded.text;
      }
      object = object.substr(0, object.rfind('.'));
      const int tid = tid_of(pid, object);
      for (auto& r : ParseRecordLines(text)) events.push_back({r.ts_us, pid, tid, FirstWord(r.text), std::move(r.text)});
    }
    if (!process_names.count(pid)) process_names[pid] = "pid " + std::to_string(e.pid);
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto add = [&out, &first](const std::string& line) {
    out += (first ? "" : ",\n") + line;
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
  return out + "\n]}\n";
}

}  // namespace atracectl
