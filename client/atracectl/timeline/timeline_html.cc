#include "timeline/timeline_html.h"

#include <map>
#include <unordered_map>
#include <vector>

#include "common/escape.h"
#include "timeline/timeline_page.h"

namespace atracectl {
namespace {

// Appends `n` and a comma (none before the first) to a JSON array being built.
void AppendNumber(std::string* out, int64_t n, bool first) {
  if (!first) out->push_back(',');
  out->append(std::to_string(n));
}

}  // namespace

void WriteTimelinePage(const Timeline& timeline, const std::string& host,
                       const std::function<void(std::string_view)>& write) {
  write(kTimelinePageHead);
  // Every byte of the data goes through AppendForScriptData, in pieces of about 64 KiB.
  std::string json, safe;
  auto data = [&](bool force = false) {
    if (!force && json.size() < 64 * 1024) return;
    safe.clear();
    AppendForScriptData(json, &safe);
    json.clear();
    write(safe);
  };
  std::map<int64_t, size_t> process_index;
  json += "{\"host\":" + JsonString(host) + ",\"tz\":" + std::to_string(timeline.utc_offset_s) +
          ",\"duplicates\":" + std::to_string(timeline.duplicates) + ",\"procs\":[";
  for (const auto& [track, p] : timeline.processes) {
    json += std::string(process_index.empty() ? "" : ",") + "[" + JsonString(p.name) + "," + std::to_string(p.pid) +
            "," + (p.device ? "1" : "0") + "]";
    process_index.emplace(track, process_index.size());
  }
  json += "],\"tracks\":[";
  std::map<std::pair<int64_t, int>, size_t> track_index;  // (process track, tid)
  for (const auto& [key, tid] : timeline.threads) {
    json += std::string(track_index.empty() ? "" : ",") + "[" + std::to_string(process_index[key.first]) + "," +
            JsonString(key.second) + "]";
    track_index.emplace(std::make_pair(key.first, tid), track_index.size());
  }
  const int64_t t0 = timeline.events.empty() ? 0 : timeline.events.front().ts;
  json += "],\"t0\":" + std::to_string(t0) + ",\"ev\":{\"dt\":[";
  int64_t last = t0;
  bool first = true;
  for (const TimelineEvent& ev : timeline.events) {
    AppendNumber(&json, ev.ts - last, first);
    last = ev.ts;
    first = false;
    data();
  }
  json += "],\"tr\":[";
  first = true;
  for (const TimelineEvent& ev : timeline.events) {
    AppendNumber(&json, static_cast<int64_t>(track_index[{ev.pid, ev.tid}]), first);
    first = false;
    data();
  }
  // Each text once, in order of first use: a record's entry is 0 for a text not seen before,
  // else how many texts back it was first seen.
  std::unordered_map<std::string_view, size_t> seen;
  std::vector<std::string_view> strings;
  json += "],\"tx\":[";
  first = true;
  for (const TimelineEvent& ev : timeline.events) {
    auto [it, added] = seen.try_emplace(ev.text, strings.size());
    if (added) strings.push_back(ev.text);
    AppendNumber(&json, added ? 0 : static_cast<int64_t>(strings.size() - it->second), first);
    first = false;
    data();
  }
  seen = {};
  json += "]},\"marks\":[";
  first = true;
  for (size_t i = 0; i < timeline.events.size(); ++i) {
    if (timeline.events[i].mark == Mark::kRecord) continue;
    const TimelineEvent& ev = timeline.events[i];
    json += std::string(first ? "" : ",") + "[" + std::to_string(i) + "," + std::to_string(static_cast<int>(ev.mark)) +
            (ev.mark == Mark::kCollective ? "," + std::to_string(ev.dur) : std::string()) + "]";
    first = false;
  }
  json += "],\"strings\":[";
  first = true;
  for (std::string_view s : strings) {
    if (!first) json += ",\n";
    json += JsonString(s);
    first = false;
    data();
  }
  json += "]}";
  data(true);
  write(kTimelinePageTail);
}

}  // namespace atracectl
