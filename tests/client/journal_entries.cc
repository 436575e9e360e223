#include "journal_entries.h"

#include <unistd.h>

#include <cstdint>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace journal_test {

std::string MissingJournalRemote() {
  if (::access(kJournalRemote, X_OK) == 0) return "";
  return std::string("needs ") + kJournalRemote +
         ", from the Debian package systemd-journal-remote (bash scripts/dev.sh deps installs it)";
}

namespace {

Fields Trusted(const std::string& host) {
  return {{"_BOOT_ID", "0123456789abcdef0123456789abcdef"},
          {"_UID", "0"},
          {"_GID", "0"},
          {"_COMM", "atraced"},
          {"_SYSTEMD_UNIT", "atraced.service"},
          {"_HOSTNAME", host},
          {"SYSLOG_IDENTIFIER", "atraced"}};
}

}  // namespace

Fields AtracedHang(const std::string& host, const std::string& job, int rank, int world, int pid,
                   const std::vector<std::string>& frames, const std::string& state, int stall_s) {
  Fields f = Trusted(host);
  f.insert(f.end(), {{"MESSAGE", "hang: pid " + std::to_string(pid)},
                     {"ATRACE_EVENT", "hang"},
                     {"ATRACE_PID", std::to_string(pid)},
                     {"ATRACE_UID", "1000"},
                     {"ATRACE_COMM", "python3"},
                     {"ATRACE_JOB", job},
                     {"ATRACE_RANK", std::to_string(rank)},
                     {"ATRACE_WORLD_SIZE", std::to_string(world)},
                     {"ATRACE_STALL_S", std::to_string(stall_s)},
                     {"ATRACE_STATE", state},
                     {"ATRACE_STALLED_PID", std::to_string(pid)},
                     {"ATRACE_PATH", "trace_" + std::to_string(pid) + "_" + std::to_string(pid) + "/hang"}});
  for (size_t i = 0; i < frames.size(); ++i) f.emplace_back("ATRACE_FRAME_" + std::to_string(i), frames[i]);
  f.emplace_back("ATRACE_LAST_RECORD_0", "schedule: step 41 of rank " + std::to_string(rank));
  return f;
}

Fields AtracedStart(const std::string& host, const std::string& job, int rank, int world, int pid) {
  Fields f = Trusted(host);
  f.insert(f.end(), {{"MESSAGE", "start: pid " + std::to_string(pid)},
                     {"ATRACE_EVENT", "start"},
                     {"ATRACE_PID", std::to_string(pid)},
                     {"ATRACE_JOB", job},
                     {"ATRACE_RANK", std::to_string(rank)},
                     {"ATRACE_WORLD_SIZE", std::to_string(world)}});
  return f;
}

Fields AtracedAgedDump(const std::string& host, const std::string& job, int rank, int world, int pid,
                       const std::string& reason) {
  Fields f = Trusted(host);
  const std::string path = "/var/log/ascend/atrace/trace_" + std::to_string(pid) + "_" + std::to_string(pid) +
                           "_20261207035000000000/schedule_event_" + std::to_string(pid) + "_20261207035000000001";
  f.insert(f.end(), {{"MESSAGE", "aged event dir " + path},
                     {"ATRACE_EVENT", "aged"},
                     {"ATRACE_PATH", path},
                     {"ATRACE_PID", std::to_string(pid)},
                     {"ATRACE_UID", "1000"},
                     {"ATRACE_CLASS", "host"},
                     {"ATRACE_JOB", job},
                     {"ATRACE_RANK", std::to_string(rank)},
                     {"ATRACE_WORLD_SIZE", std::to_string(world)},
                     {"ATRACE_REASON", reason},
                     {"ATRACE_DUMP", "hang"},
                     {"ATRACE_EXPORTED", "0"}});
  return f;
}

std::vector<std::string> JobFrames(bool odd) {
  return {"#0 0x7f0000001010 0x7f0000000000 /lib/x86_64-linux-gnu/libc.so.6 __futex_abstimed_wait+0x10",
          odd ? "#1 0x401022 0x400000 /opt/job/train load_next_batch+0x22 at loader.c:88"
              : "#1 0x401122 0x400000 /opt/job/train wait_allreduce_done+0x22 at collective.c:41",
          "#2 0x401230 0x400000 /opt/job/train main+0x30 at main.c:12"};
}

std::string ExportText(const std::vector<Fields>& entries, unsigned long long first_us) {
  std::string out;
  unsigned long long t = first_us;
  for (const Fields& entry : entries) {
    out += "__REALTIME_TIMESTAMP=" + std::to_string(t) + "\n__MONOTONIC_TIMESTAMP=" + std::to_string(t - first_us + 1000) + "\n";
    ++t;
    for (const auto& [name, value] : entry) {
      if (value.find('\n') == std::string::npos) {
        out += name + "=" + value + "\n";
        continue;
      }
      // The binary form: NAME, newline, the size as a little-endian 64-bit number, the bytes.
      out += name + "\n";
      uint64_t size = value.size();
      for (int i = 0; i < 8; ++i) out += static_cast<char>((size >> (8 * i)) & 0xff);
      out += value + "\n";
    }
    out += "\n";
  }
  return out;
}

bool WriteJournal(const std::string& dir, const std::string& name, const std::vector<Fields>& entries,
                  std::string* why, unsigned long long first_us) {
  const std::string input = dir + "/" + name + ".export";
  atraced::testing::WriteFile(input, ExportText(entries, first_us));
  const auto r = atraced::testing::Run({kJournalRemote, "-o", dir + "/" + name + ".journal", input});
  ::unlink(input.c_str());
  if (r.exit_code != 0) *why = "systemd-journal-remote: " + r.err;
  return r.exit_code == 0;
}

}  // namespace journal_test
