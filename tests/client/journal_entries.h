// Journal directories for hang --journal's tests, written as a collector gets them: entries in
// the Journal Export Format, turned into a journal file by systemd-journal-remote itself
// (`systemd-journal-remote -o DIR/NAME.journal FILE`), trusted fields (_UID, _COMM,
// _SYSTEMD_UNIT, _HOSTNAME) included as a host's journald would have sent them.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace journal_test {

inline constexpr const char* kJournalRemote = "/lib/systemd/systemd-journal-remote";

using Fields = std::vector<std::pair<std::string, std::string>>;

// "" when systemd-journal-remote can run here; else why the test skips, naming the package.
std::string MissingJournalRemote();

// One rank's hang entry as atraced writes it (daemon/app/src/journal_events.cc), with the
// trusted fields of atraced.service on `host`. `frames` innermost first.
Fields AtracedHang(const std::string& host, const std::string& job, int rank, int world, int pid,
                   const std::vector<std::string>& frames, const std::string& state = "blocked", int stall_s = 30);
Fields AtracedStart(const std::string& host, const std::string& job, int rank, int world, int pid);
// The aged entry atraced writes when aging removes a dump's directory (JournalFields of a
// StoreEvent): `reason` as AgingReasonName says it.
Fields AtracedAgedDump(const std::string& host, const std::string& job, int rank, int world, int pid,
                       const std::string& reason);

// The stacks of the tests' hung job: every rank waits in wait_allreduce_done (collective.c:41)
// but `odd`, which waits in load_next_batch (loader.c:88).
std::vector<std::string> JobFrames(bool odd);

// The export text of `entries` (values with a newline in the binary form); realtime stamps
// from `first_us` on, one microsecond apart.
std::string ExportText(const std::vector<Fields>& entries, unsigned long long first_us = 1700000000000000ull);

// Writes `entries` to DIR/NAME.journal through systemd-journal-remote; false (with `why`) when
// it fails.
bool WriteJournal(const std::string& dir, const std::string& name, const std::vector<Fields>& entries,
                  std::string* why, unsigned long long first_us = 1700000000000000ull);

}  // namespace journal_test
