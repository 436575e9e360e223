# Makes the timeline page's files (client/atracectl/timeline/page/) into one C++ source:
# timeline.html with timeline.css in place of @CSS@ and timeline.js in place of @JS@, cut at
# @DATA@ (where the page's data goes) into kTimelinePageHead and kTimelinePageTail, each a raw
# string literal. Run as `cmake -DPAGE_DIR=... -DOUTPUT=... -P embed_timeline_page.cmake`.
file(READ ${PAGE_DIR}/timeline.html html)
file(READ ${PAGE_DIR}/timeline.css css)
file(READ ${PAGE_DIR}/timeline.js js)
string(REPLACE "@CSS@" "${css}" html "${html}")
string(REPLACE "@JS@" "${js}" html "${html}")
string(FIND "${html}" "@DATA@" at)
if(at LESS 0)
  message(FATAL_ERROR "${PAGE_DIR}/timeline.html has no @DATA@")
endif()
string(SUBSTRING "${html}" 0 ${at} head)
math(EXPR after "${at} + 6")
string(SUBSTRING "${html}" ${after} -1 tail)
set(delimiter "atracectl_page")
string(FIND "${html}" ")${delimiter}\"" clash)
if(NOT clash LESS 0)
  message(FATAL_ERROR "the timeline page holds \")${delimiter}\"\", which would end its raw string")
endif()
file(WRITE ${OUTPUT}.new "// Made by cmake/embed_timeline_page.cmake from client/atracectl/timeline/page/: edit those.
#include \"timeline/timeline_page.h\"

namespace atracectl {

const std::string_view kTimelinePageHead = R\"${delimiter}(${head})${delimiter}\";
const std::string_view kTimelinePageTail = R\"${delimiter}(${tail})${delimiter}\";

}  // namespace atracectl
")
# Rewritten only when it changed, so that a reconfigure rebuilds nothing.
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
