// libFuzzer target: every name parser of names.h and the trace-time validator. A name that
// parses must format back to exactly the same bytes — one spelling per name, so the store
// can never count one directory under two names — and nothing may crash.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "atraced/store/names.h"
#include "atraced/store/trace_time.h"

using namespace atraced;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto same = [&](const std::string& formatted) {
    if (formatted != text) std::abort();
  };
  if (auto n = ParseProcessDirName(text)) same(FormatProcessDirName(*n));
  if (auto n = ParseEventDirName(text)) same(FormatEventDirName(*n));
  if (auto n = ParseObjectFileName(text)) same(FormatObjectFileName(*n));
  if (auto n = ParseStackcoreFileName(text)) same(FormatStackcoreFileName(*n));
  if (auto n = ParseMarkerName(text)) same(FormatMarkerName(*n));
  if (auto n = ParseStagingName(text)) same(FormatStagingName(*n));
  std::string why;
  (void)IsValidTraceTime(text, &why);
  (void)IsSafeName(text, &why);
  (void)IsTraceFileName(text);
  return 0;
}
