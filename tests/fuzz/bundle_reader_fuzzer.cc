// libFuzzer target: arbitrary bytes as the decompressed tar stream of a bundle that merge and
// hang read (client/atracectl/files/bundle_reader.h), and each file it hands out through what merge
// and hang make of it: bundle.jsonl's lines, a report's [stack] section and its call-path
// tree. Whatever the bytes: no crash, no read past the input, names handed out are relative
// with no "..", what is held stays bounded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "files/bundle_reader.h"
#include "files/stack_report.h"
#include "fleet/stack_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t at = 0;
  atracectl::BundleVisitor v;
  atracectl::StackTree tree;
  v.file = [&tree](const atracectl::BundleDir& dir, const std::string& name, std::string&& bytes) {
    if (dir.path.find("..") != std::string::npos || name.find('/') != std::string::npos) std::abort();
    if (bytes.size() > atracectl::kMaxBundleMember) std::abort();
    for (const auto& t : atracectl::FrameNamesOf(bytes)) tree.Add(dir.rank.value_or(0), t.frames);
  };
  v.aged = [](const atracectl::BundleAged& a) {
    if (a.rank < 0 || a.job.empty() || a.dir.size() > 4097) std::abort();  // checked, bounded
  };
  const atracectl::BundleRead r = atracectl::ReadTarStream(
      [&](char* buf, size_t n) -> long {
        const size_t k = std::min(n, size - at);
        std::memcpy(buf, data + at, k);
        at += k;
        return static_cast<long>(k);
      },
      v);
  if (r.aged > atracectl::kMaxBundleAged) std::abort();
  (void)tree.Text();
  (void)tree.Json();
  // The same bytes as bundle.jsonl lines.
  const std::string text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    (void)atracectl::ParseBundleMetaLine(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  return 0;
}
