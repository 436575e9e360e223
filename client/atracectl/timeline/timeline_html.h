// atracectl export --format html: one self-contained page that draws a Timeline
// (trace_events.h) with no network access, for clusters with no way out, in the manner of the
// Perfetto UI:
//   - one canvas: marks that share a pixel are drawn once, with their count; a page of a
//     million records draws as fast as one of ten;
//   - tracks grouped host > process ("COMM (pid)", or "device N") > object, each group folds;
//   - a ruler labelled at every zoom from days to microseconds, in the local time the records
//     were stamped in, and an overview strip of the whole span that shows where the view is;
//   - a crash, a death (SIGKILL, the OOM killer, an end without GOODBYE), a stack dump, an
//     exit and a record are drawn as different shapes, with a legend; a collective call
//     (collective_spans.h) as a bracket at its enqueue, and a bar to its completion when known;
//   - a click shows the record (for a crash or a death, its report); the search box
//     highlights the records whose text holds what is typed, counts them, hides the tracks
//     without one, and Enter steps through them;
//   - W/S zoom, A/D pan, drag to pan, Ctrl+wheel zoom, 0 shows all; the page fills the window.
// The page's state is on <body> as data-* attributes (groups, tracks, rows, ticks, hits,
// drawn marks, first paint), and window.timeline.locate(text) says where a record is drawn:
// what a script or a test in a headless browser reads.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "timeline/trace_events.h"

namespace atracectl {

// The whole page for `timeline`, through `write`. The data sits in a
// <script type="application/json"> block in columns (times as differences, a table of the
// distinct texts, a track index per record), every byte of it made safe as script data by
// AppendForScriptData (escape.h).
void WriteTimelinePage(const Timeline& timeline, const std::string& host,
                       const std::function<void(std::string_view)>& write);

}  // namespace atracectl
