#include "fleet_bundles.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "support/subprocess.h"

using atraced::testing::Run;
using atraced::testing::WriteFile;

namespace fleet_test {
namespace {

std::string ProcDir(int pid) { return "trace_" + std::to_string(pid) + "_" + std::to_string(pid) + "_20261206060000000000"; }
std::string EventDir(int pid, int n) {
  char t[32];
  std::snprintf(t, sizeof t, "2026120606%02d00000000", 10 + n);
  return "schedule_event_" + std::to_string(pid) + "_" + t;
}

std::string DirLine(const RankProcess& p, const std::string& rel, int n, const char* made_by) {
  return "{\"record\":\"dir\",\"path\":\"" + rel + "\",\"pid\":" + std::to_string(p.pid) + ",\"comm\":\"" + p.comm +
         "\",\"kind\":\"schedule\",\"side\":\"host\",\"device_id\":0,\"created_unix_us\":" +
         std::to_string(1796537400000000 + n * 1000000) + ",\"job\":\"" + p.job + "\",\"rank\":" + std::to_string(p.rank) +
         ",\"world_size\":" + std::to_string(p.world_size) + (p.uid ? ",\"uid\":" + std::to_string(*p.uid) : std::string()) +
         (made_by ? ",\"made_by\":\"" + std::string(made_by) + "\"" : std::string()) + "}\n";
}

std::string StackReport(const RankProcess& p) {
  const std::string pid = std::to_string(p.pid);
  return "atraced: process " + pid + " (" + p.comm + ") dumped from outside; it runs on\n\n[process]\ncrash reason:35\n"
         "crash pid:" + pid + "\ncrash tid:" + pid + "\n\n[stack]\n"
         "Thread 1 (" + std::to_string(p.pid + 1) + ", hccl_watchdog)\n"
         "#0 0x00007f0000001000 0x00007f0000000000 /lib/x86_64-linux-gnu/libc.so.6 poll+0x4\n"
         "Thread 2 (" + pid + ", " + p.comm + ")\n"
         "#0 0x00007f0000001000 0x00007f0000000000 /lib/x86_64-linux-gnu/libc.so.6 __futex_abstimed_wait+0x12\n"
         "#1 0x0000000000401000 0x0000000000400000 /opt/job/train " + p.blocked_in + "+0x10 at train.c:10\n"
         "#2 0x0000000000401100 0x0000000000400000 /opt/job/train main+0x20 at train.c:40\n" + p.extra_frames +
         "\n[maps]\n00400000-00402000 r-xp 00000000 08:01 12 /opt/job/train\n\n[threads]\n";
}

std::string StackReport(RankProcess p, const std::string& blocked_in) {
  p.blocked_in = blocked_in;
  return StackReport(p);
}

}  // namespace

std::string MakeBundle(const std::string& dir, const BundleSpec& spec) {
  std::string meta = "{\"record\":\"host\",\"format\":1,\"host\":\"" + spec.host +
                     "\",\"boot_id\":\"b\",\"exported_unix_us\":1796537500000000,\"utc_offset_s\":0,\"realtime_us\":1,"
                     "\"monotonic_us\":1,\"boottime_us\":1,\"clock_synchronized\":" +
                     (spec.clock_synchronized ? "true" : "false") + ",\"adjtimex\":\"" +
                     (spec.clock_synchronized ? "TIME_OK" : "TIME_ERROR") + "\"}\n";
  std::vector<std::string> members{"bundle.jsonl"};
  for (const RankProcess& p : spec.ranks) {
    for (int n = 0; n < p.dumps; ++n) {
      const std::string rel = ProcDir(p.pid) + "/" + EventDir(p.pid, n);
      REQUIRE(Run({"mkdir", "-p", dir + "/atrace/" + rel}).exit_code == 0);
      // The ring as saved then: records 0..n+1, a second (10 ms apart each, per rank).
      std::string ring, positions;
      for (int r = 0; r <= n + 1; ++r) {
        if (n == 1 && r == p.torn) continue;
        char line[160];
        const std::string of = p.text_tag.empty() ? "rank " + std::to_string(p.rank) : p.text_tag;
        std::snprintf(line, sizeof line, "2026-12-06 06:09:%02d.%03d.%03d record %d of %s\n", 10 + r,
                      p.text_tag.empty() ? p.rank * 10 : 0, n * p.later_shift_us, r, of.c_str());
        ring += line;
        positions += (positions.empty() ? "" : ",") + std::to_string(r);
      }
      // The ring's identity: 0x1234 in every process (only the process directory tells them apart).
      if (p.positions) ring += "atraced: ring 0000000000001234 from 0 records " + positions + "\n";
      WriteFile(dir + "/atrace/" + rel + "/schedule_tracer_CANN_API.txt", ring);
      if (p.stacks) {
        WriteFile(dir + "/atrace/" + rel + "/stackcore_tracer_35_" + std::to_string(p.pid) + "_" + p.comm +
                      "_2026120606" + std::to_string(10 + n) + "00000000.txt",
                  StackReport(p));
      }
      members.push_back("atrace/" + rel);
      meta += DirLine(p, rel, n, n == 0 ? nullptr : "daemon");  // the first as an older bundle writes it
    }
    if (!p.own_stack_in.empty()) {  // the process's own file, in a directory it made, after its dumps
      const std::string rel = ProcDir(p.pid) + "/" + EventDir(p.pid, p.dumps);
      REQUIRE(Run({"mkdir", "-p", dir + "/atrace/" + rel}).exit_code == 0);
      WriteFile(dir + "/atrace/" + rel + "/stackcore_tracer_35_" + std::to_string(p.pid) + "_" + p.comm + "_2026120606" +
                    std::to_string(10 + p.dumps) + "00000000.txt",
                StackReport(p, p.own_stack_in));
      members.push_back("atrace/" + rel);
      meta += DirLine(p, rel, p.dumps, "client");
    }
  }
  meta += spec.extra_meta_lines;
  REQUIRE(Run({"mkdir", "-p", dir + "/atrace"}).exit_code == 0);
  WriteFile(dir + "/bundle.jsonl", meta);
  const std::string out = dir + ".tar.gz";
  if (spec.reverse_dirs) std::reverse(members.begin() + 1, members.end());
  std::vector<std::string> tar{"tar", "-czf", out, "-C", dir};
  tar.insert(tar.end(), members.begin(), members.end());
  if (spec.ranks.empty()) tar.push_back("atrace");
  REQUIRE(Run(tar).exit_code == 0);
  return out;
}

std::string TarMember(const std::string& name, const std::string& data, char type, uint64_t claimed_size) {
  char h[512] = {};
  std::strncpy(h, name.c_str(), 100);
  std::snprintf(h + 100, 8, "%07o", 0644);
  std::snprintf(h + 108, 8, "%07o", 0);
  std::snprintf(h + 116, 8, "%07o", 0);
  const uint64_t size = claimed_size ? claimed_size : data.size();
  if (size < (1ull << 33)) {
    std::snprintf(h + 124, 12, "%011llo", static_cast<unsigned long long>(size));
  } else {  // GNU base-256
    h[124] = static_cast<char>(0x80);
    for (int i = 0; i < 8; ++i) h[135 - i] = static_cast<char>((size >> (8 * i)) & 0xff);
  }
  std::snprintf(h + 136, 12, "%011o", 0);
  h[156] = type;
  std::memcpy(h + 257, "ustar\0" "00", 8);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  std::string out(h, 512);
  out += data;
  out.append((512 - data.size() % 512) % 512, '\0');
  return out;
}

void WriteGzipTar(const std::string& path, std::string tar) {
  tar.append(1024, '\0');
  WriteFile(path + ".tar", tar);
  REQUIRE(Run({"sh", "-c", "gzip -c '" + path + ".tar' > '" + path + "'"}).exit_code == 0);
}

}  // namespace fleet_test
