// atracectl export --format html: one self-contained page that draws the timeline of a
// Trace Event Format document (trace_events.h) with no network access, for clusters with
// no way out: a row per track, a mark per record, the record's text on hover (and in a pane
// on click), zoom with the wheel and pan by dragging, double-click to see all again.
// Plain SVG and a page of script, no library.
#pragma once

#include <string>

namespace atracectl {

// The page for `trace_json` (ChromeTraceJson's output).
std::string TimelineHtml(const std::string& trace_json);

}  // namespace atracectl
