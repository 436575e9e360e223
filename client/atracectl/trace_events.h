// Trace records of event directories as Chrome's Trace Event Format (the JSON that the
// Perfetto UI and chrome://tracing open), for `atracectl export --format chrome-json`.
//
//   - every record is an instant event ("ph":"i", "s":"t") at its time in microseconds
//     since the epoch; its name is the first word of its text and the whole text is in
//     args.text;
//   - a host process is a process track (its pid), named by its program where a report of
//     it says, else "pid N"; each device is a process track of its own, "device N";
//   - each object (file) is a thread track of its process, named by the object;
//   - a crash, death or stack-dump report is one instant event at its directory's time,
//     named by its kind, with the report's first lines in args.
// One event per line, sorted by time, so the output streams and diffs well.
// Every string from a file goes through escape.h's JsonString.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/atrace_client.hpp"
#include "text_budget.h"

namespace atracectl {

// Calls `record(ts_us, text)` for each line "YYYY-MM-DD hh:mm:ss.mmm.uuu text" (CANN's .txt,
// and asys's text of a .bin) in local time, until it returns false; other lines (a trailer)
// are skipped. False when `record` stopped it.
bool ForEachRecordLine(std::string_view text, const std::function<bool(int64_t ts_us, std::string_view text)>& record);

// Writes the whole Trace Event Format document for `entries`, whose directories are under
// `trace_dir`, through `put`, in pieces of about a line. Events are sorted by time, so they are
// held until the end: what is held is bounded by `budget` (their text and their bookkeeping,
// summed over every file); files past it are left out, and `budget.reached` says so. Files
// that cannot be read or decoded are listed in `problems`; `files_total` is set to the number
// of files in the directories.
void WriteChromeTrace(const std::vector<atrace::ListEntry>& entries, const std::string& trace_dir, TextBudget& budget,
                      std::vector<std::string>* problems, size_t* files_total,
                      const std::function<void(std::string_view)>& put);

}  // namespace atracectl
