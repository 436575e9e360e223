#include "journal/journal_reader.h"

#include <systemd/sd-journal.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "journal/hang_journal_fields.h"

namespace atracectl::journal {
namespace {

std::string Errno(const char* what, int r) { return std::string(what) + ": " + std::strerror(-r); }

// The value of `name` in the current entry, cut at kMaxValue; nullopt when absent.
std::optional<std::string> Get(sd_journal* j, std::string_view name) {
  const void* data = nullptr;
  size_t len = 0;
  const std::string key(name);
  if (sd_journal_get_data(j, key.c_str(), &data, &len) < 0) return std::nullopt;
  std::string_view field(static_cast<const char*>(data), len);
  if (field.size() <= name.size() || field[name.size()] != '=') return std::nullopt;
  return std::string(field.substr(name.size() + 1, kMaxValue));
}

void Keep(JournalBook* book, HangEntry&& e) {
  JobEntries& job = book->jobs[e.job];
  auto& by_process = e.aged ? job.aged : e.hang ? job.hangs : job.starts;
  const std::pair<std::string, int32_t> key(e.host, e.pid);
  auto it = by_process.find(key);
  if (it == by_process.end()) {
    if (book->entries_kept >= kMaxEntries) {
      ++book->past_bound;
      return;
    }
    ++book->entries_kept;
    if (e.hang) job.last_hang = std::chrono::steady_clock::now();
    by_process.emplace(key, std::move(e));
    return;
  }
  if (e.realtime_us >= it->second.realtime_us) {
    if (e.hang) job.last_hang = std::chrono::steady_clock::now();
    it->second = std::move(e);
  }
}

}  // namespace

HangJournal::~HangJournal() {
  if (j_) sd_journal_close(j_);
}

HangJournal::HangJournal(HangJournal&& other) noexcept : j_(other.j_) { other.j_ = nullptr; }

std::optional<HangJournal> HangJournal::Open(const std::string& dir, const std::string& job, std::string* error) {
  sd_journal* j = nullptr;
  int r = sd_journal_open_directory(&j, dir.c_str(), 0);
  if (r < 0) {
    *error = Errno("cannot open the journal directory", r);
    return std::nullopt;
  }
  HangJournal journal(j);
  const std::string hang = std::string(kEvent) + "=" + std::string(kEventHang);
  const std::string start = std::string(kEvent) + "=" + std::string(kEventStart);
  const std::string aged = std::string(kEvent) + "=" + std::string(kEventAged);
  const std::string of_dump = std::string(kDump) + "=dump", of_hang = std::string(kDump) + "=hang";
  const std::string of_job = std::string(kJob) + "=" + job;
  // Matches of one field are ORed, of two fields ANDed; a disjunction ORs the two terms:
  // (hang or start) [and the job], or (aged and of a dump) [and the job]. An aged entry of a
  // directory that was no dump (most of them) is never read.
  for (const std::vector<const std::string*>& term :
       {std::vector<const std::string*>{&hang, &start}, std::vector<const std::string*>{&aged, &of_dump, &of_hang}}) {
    if (term.front() == &aged && (r = sd_journal_add_disjunction(j)) < 0) {
      *error = Errno("sd_journal_add_disjunction", r);
      return std::nullopt;
    }
    for (const std::string* match : term) {
      if ((r = sd_journal_add_match(j, match->c_str(), 0)) < 0) {
        *error = Errno("sd_journal_add_match", r);
        return std::nullopt;
      }
    }
    if (!job.empty() && (r = sd_journal_add_match(j, of_job.c_str(), 0)) < 0) {
      *error = Errno("sd_journal_add_match", r);
      return std::nullopt;
    }
  }
  if ((r = sd_journal_set_data_threshold(j, kMaxValue + 64)) < 0) {
    *error = Errno("sd_journal_set_data_threshold", r);
    return std::nullopt;
  }
  return journal;
}

size_t HangJournal::ReadNew(JournalBook* book, std::string* error) {
  size_t looked = 0;
  std::vector<std::string> values;
  std::vector<JournalField> fields;
  for (;;) {
    const int r = sd_journal_next(j_);
    if (r < 0) {
      *error = Errno("sd_journal_next", r);
      return looked;
    }
    if (r == 0) return looked;
    ++looked;
    uint64_t realtime = 0;
    (void)sd_journal_get_realtime_usec(j_, &realtime);
    // The trusted fields first: an entry atraced did not write costs these reads only.
    values.clear();
    fields.clear();
    for (std::string_view name : {kTrustedUid, kTrustedUnit, kTrustedComm}) {
      if (auto v = Get(j_, name)) {
        values.push_back(std::move(*v));
        fields.push_back({name, {}});
      }
    }
    for (size_t i = 0; i < fields.size(); ++i) fields[i].value = values[i];
    if (!WrittenByAtraced(fields)) {
      ++book->forged;  // matched ATRACE_EVENT=hang|start, or aged of a dump: it claims to be one
      continue;
    }
    // Every field of a trusted entry, bounded: names and values are views into `values`.
    values.clear();
    fields.clear();
    const void* data = nullptr;
    size_t len = 0;
    sd_journal_restart_data(j_);
    while (values.size() < kMaxFieldsPerEntry && sd_journal_enumerate_data(j_, &data, &len) > 0) {
      values.emplace_back(static_cast<const char*>(data), std::min(len, kMaxValue + 64));
    }
    for (const std::string& v : values) {
      const size_t eq = v.find('=');
      if (eq == std::string::npos) continue;
      fields.push_back({std::string_view(v).substr(0, eq), std::string_view(v).substr(eq + 1)});
    }
    ParsedEntry parsed = ParseHangEntry(fields, realtime);
    switch (parsed.kind) {
      case EntryKind::kHang:
      case EntryKind::kStart:
      case EntryKind::kAged:
        Keep(book, std::move(parsed.entry));
        break;
      case EntryKind::kForged:  // the trusted fields were given twice, among the rest
        ++book->forged;
        break;
      case EntryKind::kMalformed:
        if (book->malformed++ == 0) book->first_problem = parsed.problem;
        break;
      case EntryKind::kOther:
        break;
    }
  }
}

bool HangJournal::Wait(std::chrono::milliseconds timeout, std::string* error) {
  const int r = sd_journal_wait(j_, static_cast<uint64_t>(timeout.count()) * 1000);
  if (r < 0) {
    *error = Errno("sd_journal_wait", r);
    return false;
  }
  return true;
}

}  // namespace atracectl::journal
