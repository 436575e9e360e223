// One journal entry as `hang --journal` takes it: the fields of an entry (as sd-journal or
// the Journal Export Format gives them, NAME and value) checked into a HangEntry, or the
// reason it is not one. Pure: the fuzzer (tests/fuzz/hang_entry_fuzzer.cc) calls it as the
// reader does.
//
// Trust: journald lets any local process write any field not starting with '_', so an entry
// counts as atraced's only when its trusted fields say so: _UID=0 and _SYSTEMD_UNIT=
// atraced.service or _COMM=atraced, each given once. An ATRACE_EVENT=hang or start without
// that is kForged: counted by the caller, nothing of it kept or shown. So is an
// ATRACE_EVENT=aged that claims a dump (ATRACE_DUMP): only the daemon's word makes a rank aged.
// Every value is checked (labels by the daemon's own rule, proto::CheckLabel; numbers in
// range) and cut at kMaxValue; numbered fields past kMaxFrames / kMaxLastRecords /
// kMaxJournalCommunicators are ignored. A communicator (ATRACE_COLL_<n>) not in the form
// atraced writes makes the entry kMalformed.
// The text kept is not escaped here: printers escape it (escape.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "atraced/proto/ledger_summary.h"

namespace atracectl::journal {

struct JournalField {
  std::string_view name, value;
};

struct HangEntry {
  bool hang = true;  // false: a start entry (the process connected), or an aged one
  bool aged = false;  // an aged entry: atraced removed this process's dump `path` for `reason`
  std::string reason;  // aged: count, bytes, keep-free, age or vacuum
  bool exported = false;  // aged: a bundle held the dump first
  std::string job, host, comm, state, path, refused;
  std::optional<int64_t> rank, world_size, stall_s;
  std::optional<uint32_t> uid;
  int32_t pid = 0, stalled_pid = 0;
  std::vector<std::string> frames;  // the main thread's backtrace lines, innermost first
  std::vector<std::pair<std::string, std::string>> last_records;  // tracer, record
  std::vector<atraced::proto::CommunicatorJournal> comms;          // its ledger's, by field number
  uint64_t realtime_us = 0;  // when journald received it
};

enum class EntryKind {
  kHang,       // atraced's hang entry: `entry` is set
  kStart,      // atraced's start entry: `entry` is set (no frames, records or state)
  kAged,       // atraced's aged entry of a dump's directory: `entry` is set (aged, reason, path)
  kOther,      // no ATRACE_EVENT of ours (another event of atraced's, an aged one of no dump, or
               // another program's)
  kForged,     // ATRACE_EVENT=hang|start|aged without atraced's trusted fields
  kMalformed,  // atraced's, but a field fails its check (`problem` says which)
};

struct ParsedEntry {
  EntryKind kind = EntryKind::kOther;
  HangEntry entry;
  std::string problem;  // kMalformed: the field and why (the field's name only, no value)
};

// True when the trusted fields among `fields` say atraced wrote the entry.
bool WrittenByAtraced(const std::vector<JournalField>& fields);

ParsedEntry ParseHangEntry(const std::vector<JournalField>& fields, uint64_t realtime_us);

// A frame line's function (symbol without its offset; else MODULE+0xOFF) and source
// ("file:line", "" when the line has none), as the [stack] section's parser names frames.
struct FramePlace {
  std::string function, source;
};
FramePlace PlaceOfFrame(std::string_view line);

}  // namespace atracectl::journal
