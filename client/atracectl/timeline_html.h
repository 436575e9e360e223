// atracectl export --format html: one self-contained page that draws the timeline of a
// Trace Event Format document (trace_events.h) with no network access, for clusters with
// no way out: a row per track, a mark per record, the record's text on hover (and in a pane
// on click), zoom with the wheel and pan by dragging, double-click to see all again.
// Plain SVG and a page of script, no library.
#pragma once

#include <string_view>

namespace atracectl {

// The page is TimelineHtmlHead(), then the Trace Event document (WriteChromeTrace's output)
// made safe as script data by AppendForScriptData (escape.h), then TimelineHtmlTail(): the
// data sits in a <script type="application/json"> block that the drawing script parses.
std::string_view TimelineHtmlHead();
std::string_view TimelineHtmlTail();

}  // namespace atracectl
