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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "atraced/atrace_client.hpp"

namespace atracectl {

struct TraceRecord {
  int64_t ts_us = 0;
  std::string text;
};

// Lines "YYYY-MM-DD hh:mm:ss.mmm.uuu text" (CANN's .txt, and asys's text of a .bin) in local
// time; other lines (a trailer) are skipped.
std::vector<TraceRecord> ParseRecordLines(const std::string& text);

// The whole Trace Event Format document for `entries`, whose directories are under
// `trace_dir`. Files that cannot be read or decoded are listed in `problems`.
std::string ChromeTraceJson(const std::vector<atrace::ListEntry>& entries, const std::string& trace_dir,
                            std::vector<std::string>* problems);

}  // namespace atracectl
