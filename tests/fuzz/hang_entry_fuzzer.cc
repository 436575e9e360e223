// hang --journal's parser of journal entries (client/atracectl/journal/hang_entry.h) and the
// report built from them (journal_report.h): the input is the fields of up to a few entries,
// "NAME=value" lines, an empty line between entries, as the Journal Export Format writes them
// (what a host's journald or a forged upload to journal-remote can hold). Every entry is
// parsed; the trusted ones are kept as the reader keeps them and reported, text and JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "journal/hang_entry.h"
#include "journal/journal_report.h"

namespace j = atracectl::journal;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  j::JournalBook book;
  std::vector<j::JournalField> fields;
  uint64_t when = 1;
  const auto flush = [&]() {
    j::ParsedEntry p = j::ParseHangEntry(fields, when++);
    fields.clear();
    if (p.kind == j::EntryKind::kForged) ++book.forged;
    if (p.kind == j::EntryKind::kMalformed) ++book.malformed;
    if (p.kind != j::EntryKind::kHang && p.kind != j::EntryKind::kStart && p.kind != j::EntryKind::kAged) return;
    for (const std::string& f : p.entry.frames) (void)j::PlaceOfFrame(f);
    j::JobEntries& job = book.jobs[p.entry.job];
    auto& by = p.entry.aged ? job.aged : p.entry.hang ? job.hangs : job.starts;
    by[{p.entry.host, p.entry.pid}] = std::move(p.entry);
  };
  while (!in.empty()) {
    const size_t end = in.find('\n');
    const std::string_view line = in.substr(0, end);
    in.remove_prefix(end == std::string_view::npos ? in.size() : end + 1);
    if (line.empty()) {
      flush();
      continue;
    }
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) fields.push_back({line.substr(0, eq), line.substr(eq + 1)});
  }
  flush();
  for (const auto& [job, entries] : book.jobs) {
    if (entries.hangs.empty()) continue;
    (void)j::JobReportText(job, entries, book);
    (void)j::JobReportJson(job, entries, book);
  }
  return 0;
}
