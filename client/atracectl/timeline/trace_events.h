// Trace records of event directories as a timeline (Timeline), written as Chrome's Trace
// Event Format (the JSON that the Perfetto UI and chrome://tracing open) for
// `atracectl export --format chrome-json`, and as the html page's data (timeline_html.h).
//
//   - every record is an instant event ("ph":"i", "s":"t") at its time in microseconds
//     since the epoch, named by its object (the file's {object} of {tracer}_tracer_{object}),
//     the whole text in args.text; a record saved in more than one directory of a process
//     (a ring kept by a schedule and then by a stackcore directory) is one event: of records of
//     one track at the same microsecond with the same text, those of the first directory are
//     kept (a record repeated within one file stays repeated);
//   - a host process is a process track (its pid), named by its COMM as the daemon's LIST
//     says, else by the program a report of it names, else "pid N"; each device is a process
//     track of its own, "device N";
//   - each object (file) is a thread track of its process, named by the object;
//   - a crash, death or stack-dump report, and an exit directory, is one instant event at its
//     directory's time on the process's "events" track, named by what it was ("crash", ...,
//     dir_origin.h), with the report's first 16 KiB in args;
//   - each call of a process's collective ledger is a span ("ph":"X") on its track "comm NAME",
//     from enqueue to completion, or an instant when its completion is not known; seq, op,
//     count, dtype and the rest in args (collective_spans.h).
// One event per line, sorted by time, so the output streams and diffs well.
// Every string from a file goes through escape.h's JsonString.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/atrace_client.hpp"
#include "common/text_budget.h"

namespace atracectl {

// How an event is drawn: a record, what made its directory, or a collective call.
enum class Mark : uint8_t { kRecord = 0, kCrash = 1, kDeath = 2, kDump = 3, kExit = 4, kCollective = 5 };

struct TimelineEvent {
  TimelineEvent() = default;
  TimelineEvent(int64_t ts_us, int64_t process, int track, Mark m, uint32_t directory, std::string_view event_name,
                std::string_view event_text, int64_t duration = -1, std::string_view event_args = {})
      : ts(ts_us), pid(process), tid(track), mark(m), dir(directory), name(event_name), text(event_text),
        dur(duration), args(event_args) {}

  int64_t ts = 0;   // microseconds since the epoch
  int64_t pid = 0;  // process track
  int tid = 0;      // thread track within it
  Mark mark = Mark::kRecord;
  uint32_t dir = 0;             // which of the directories read holds it
  std::string_view name, text;  // into Timeline::texts, or a constant
  // kCollective (collective_spans.h): its duration in microseconds (-1: an instant, its
  // completion not known) and its args' JSON members.
  int64_t dur = -1;
  std::string_view args;
};

struct TimelineProcess {
  std::string name;  // COMM, the program of a report, "pid N" or "device N"
  int32_t pid = 0;   // the host process ("" for a device)
  bool device = false;
};

struct Timeline {
  std::deque<TimelineEvent> events;  // by time; one per record
  std::map<int64_t, TimelineProcess> processes;               // by process track
  std::map<std::pair<int64_t, std::string>, int> threads;     // (process track, object) -> tid
  std::deque<std::string> texts;  // what events point into: appended to only, so it stays put
  size_t duplicates = 0;          // records left out as the same as one already there
  int32_t utc_offset_s = 0;       // the local time's offset the records' stamps were read in
};

// Calls `record(ts_us, text)` for each line "YYYY-MM-DD hh:mm:ss.mmm.uuu text" (CANN's .txt,
// and asys's text of a .bin) in local time, until it returns false; other lines (a trailer)
// are skipped. False when `record` stopped it.
// With `utc_offset_s`, the stamps are read as local time at that offset from UTC (a bundle
// from another host's zone), not in this machine's zone.
bool ForEachRecordLine(std::string_view text, const std::function<bool(int64_t ts_us, std::string_view text)>& record,
                       std::optional<int32_t> utc_offset_s = std::nullopt);

// The object of a trace file's name: "{tracer}_tracer_{object}.txt|.bin" -> "{object}".
std::string ObjectOfFile(const std::string& file_name);
// How a report (stackcore_tracer_*.txt) is drawn, from its first lines: its mark and name
// ("crash", "death", "stack dump", "hang dump" or "report").
std::pair<Mark, std::string_view> ReportMark(const std::string& report);
// The Trace Event Format lines (without separators) export and merge write.
std::string ChromeProcessName(int64_t pid, std::string_view name);
std::string ChromeThreadName(int64_t pid, int tid, std::string_view name);
std::string ChromeEvent(const TimelineEvent& ev);

// Reads the records of `entries`, whose directories are under `trace_dir`, into `out`. What is
// held is bounded by `budget` (the text and the bookkeeping of every event, summed over every
// file); files past it are left out, and `budget.reached` says so. Files that cannot be read or
// decoded are listed in `problems`; `files_total` is set to the number of files in the
// directories; `progress(files_done, files_total)` is called after each file.
void ReadTimeline(const std::vector<atrace::ListEntry>& entries, const std::string& trace_dir, TextBudget& budget,
                  std::vector<std::string>* problems, size_t* files_total, Timeline* out,
                  const std::function<void(size_t, size_t)>& progress = nullptr);

// The whole Trace Event Format document of `timeline`, through `put`, in pieces of about a line.
void WriteChromeTrace(const Timeline& timeline, const std::function<void(std::string_view)>& put);

}  // namespace atracectl
