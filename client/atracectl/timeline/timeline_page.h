// The timeline page's own text, made at build time from timeline/page/ (timeline.html with
// timeline.css and timeline.js in it; cmake/embed_timeline_page.cmake): what comes before the
// page's data and what comes after it.
#pragma once

#include <string_view>

namespace atracectl {

extern const std::string_view kTimelinePageHead;  // to <script type="application/json" id="data">
extern const std::string_view kTimelinePageTail;  // from its </script> to the page's end

}  // namespace atracectl
