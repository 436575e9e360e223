#include "cpu_bench.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "atraced/atrace_client.h"
#include "bench_client.h"
#include "conc_runner.h"

namespace atraced_bench {
namespace {


int Emit(atrace_client* c, const std::vector<uint8_t>& data) {
  const atrace_event_spec ev{ATRACE_EVENT_SCHEDULE, ATRACE_SIDE_HOST, 0, nullptr};
  const atrace_file_spec file{ATRACE_FILE_OBJECT, "hccl", 0, 0, 0, 0, nullptr};
  return atrace_emit(c, &ev, &file, data.data(), data.size(), 0, nullptr, 0);
}

// CPU time of every thread of process `pid` so far, ns (the kernel's sum_exec_runtime: what
// utime + stime count in ticks).
int64_t ProcessCpuNs(pid_t pid) {
  clockid_t clk;
  if (int rc = ::clock_getcpuclockid(pid, &clk); rc != 0) Fail("clock_getcpuclockid " + std::to_string(pid) + ": " + std::strerror(rc));
  timespec ts{};
  if (::clock_gettime(clk, &ts) != 0) Fail("clock_gettime of process " + std::to_string(pid) + ": " + std::strerror(errno));
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// utime + stime from /proc/PID/stat (fields 14 and 15), in clock ticks.
long StatTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = all.rfind(')');
  if (paren == std::string::npos) Fail("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream rest(all.substr(paren + 2));  // field 3 (state) on
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::atol(field.c_str());
    if (i == 15) stime = std::atol(field.c_str());
  }
  return utime + stime;
}

// A "Vm...:" line of /proc/PID/status, KiB.
long StatusKiB(pid_t pid, const char* key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const size_t klen = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, klen, key) == 0) return std::strtol(line.c_str() + klen, nullptr, 10);
  }
  Fail(std::string("no ") + key + " in /proc/" + std::to_string(pid) + "/status");
}

// Resets VmHWM to the current RSS (Linux 4.0+). False if the kernel refuses.
bool ResetPeak(pid_t pid) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/clear_refs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

struct Subject {
  std::string name;  // "before" or "after"
  std::unique_ptr<Daemon> daemon;
  ClientPtr sync;    // the sync side's connection, opened once
  long ticks0 = 0;   // /proc/PID/stat utime+stime when the rounds start
  uint64_t events = 0;  // events sent in the rounds (warm-up included, as the ticks are)
};

// What one side records besides its value (CPU per event), the warm-up run skipped.
struct Extra {
  bool warm = true;
  std::vector<double> eps, peak_mib, rss_mib;
};

}  // namespace

void CpuCase(const CpuParams& p, Table& table) {
  const auto data = Pattern(kEventBytes);
  std::vector<Subject> subjects(2);
  subjects[0].name = "before";
  subjects[1].name = "after";
  bool peak_reset = true;
  std::vector<double> idle[2];
  for (int k = 0; k < 2; ++k) {
    Subject& s = subjects[static_cast<size_t>(k)];
    s.daemon = std::make_unique<Daemon>();
    Daemon::Options o;
    o.binary = k == 0 ? p.before_binary : p.after_binary;
    o.root = p.work + "/cpu-" + s.name + "/root";
    o.socket = p.work + "/cpu-" + s.name + ".sock";
    o.log = p.work + "/cpu-" + s.name + ".log";
    o.record_num = 10;
    o.extra = {"--rate-limit-burst", "0"};  // as every other case: the limiter is not measured
    if (!MakeDirs(o.root)) Fail("mkdir " + o.root + ": " + std::strerror(errno));
    std::string error;
    if (s.daemon->Start(o, &error) < 0) Fail("starting atraced (cpu " + s.name + ", " + o.binary + "): " + error);
    s.sync.reset(OpenClient(o.socket));
    for (int i = 0; i < 10; ++i) Check(Emit(s.sync.get(), data), "prefill atrace_emit (" + s.name + ")", s.sync.get());
    if (!WaitForEventDirs(o.root + "/atrace", 10)) Fail("cpu: atraced (" + s.name + ") did not settle");
  }
  ::usleep(200000);
  for (int k = 0; k < 2; ++k) {
    const pid_t pid = subjects[static_cast<size_t>(k)].daemon->pid();
    for (int i = 0; i < 5; ++i) idle[k].push_back(static_cast<double>(StatusKiB(pid, "VmRSS:")) / 1024.0);
    subjects[static_cast<size_t>(k)].ticks0 = StatTicks(pid);
  }

  // Workloads: "sync", then "c<N>" for each client count.
  std::vector<std::string> loads{"sync"};
  for (int n : p.clients) loads.push_back("c" + std::to_string(n));
  // extras[w][k], sides in the same order.
  std::vector<std::vector<Extra>> extras(loads.size(), std::vector<Extra>(2));
  std::vector<Side> sides;
  for (size_t w = 0; w < loads.size(); ++w) {
    for (size_t k = 0; k < 2; ++k) {
      Subject* s = &subjects[k];
      Extra* x = &extras[w][k];
      const int clients = w == 0 ? 0 : p.clients[w - 1];
      sides.push_back({loads[w] + "." + s->name, [&p, &data, &peak_reset, s, x, clients] {
                         const pid_t pid = s->daemon->pid();
                         peak_reset = ResetPeak(pid) && peak_reset;
                         const int64_t cpu0 = ProcessCpuNs(pid);
                         const int64_t t0 = NowNs();
                         uint64_t events = 0;
                         double eps = 0;
                         if (clients == 0) {
                           for (int i = 0; i < p.sync_events; ++i) Check(Emit(s->sync.get(), data), "atrace_emit", s->sync.get());
                           events = static_cast<uint64_t>(p.sync_events);
                           eps = static_cast<double>(events) / (static_cast<double>(NowNs() - t0) / 1e9);
                         } else {
                           const std::string socket = s->daemon->socket();
                           ConcResult r = RunProcesses(clients, p.conc_ms, [socket]() -> ConcStep {
                             auto d = std::make_shared<const std::vector<uint8_t>>(Pattern(kEventBytes));
                             auto c = std::make_shared<ClientPtr>(OpenClient(socket));
                             return [c, d]() -> uint32_t {
                               const int64_t t = NowNs();
                               Check(Emit(c->get(), *d), "atrace_emit", c->get());
                               return static_cast<uint32_t>(NowNs() - t);
                             };
                           });
                           if (!r.error.empty()) Fail("cpu (" + std::to_string(clients) + " clients, " + s->name + "): " + r.error);
                           events = r.events;
                           eps = r.events_per_s;
                         }
                         // Its deletes are the event's cost too: wait for them, then read the clock.
                         if (!WaitForEventDirs(s->daemon->root() + "/atrace", 10)) Fail("cpu: atraced (" + s->name + ") did not settle");
                         const int64_t cpu1 = ProcessCpuNs(pid);
                         s->events += events;
                         if (events == 0) Fail("cpu: no events made (" + s->name + ")");
                         if (x->warm) {
                           x->warm = false;
                         } else {
                           x->eps.push_back(eps);
                           x->peak_mib.push_back(static_cast<double>(StatusKiB(pid, "VmHWM:")) / 1024.0);
                           x->rss_mib.push_back(static_cast<double>(StatusKiB(pid, "VmRSS:")) / 1024.0);
                         }
                         return static_cast<double>(cpu1 - cpu0) / 1000.0 / static_cast<double>(events);
                       }, {}});
    }
  }
  Interleave(sides, p.rounds);

  const bool same = p.before_binary == p.after_binary;
  const std::string bname[2] = {"before (" + p.before_binary + ")" + (same ? ", the same binary as after" : ""),
                                "after (" + p.after_binary + ")"};
  const std::string peak = peak_reset ? "peak VmRSS during the side (VmHWM, reset through clear_refs before it)"
                                      : "VmHWM since the daemon started (clear_refs refused)";
  for (size_t w = 0; w < loads.size(); ++w) {
    const std::string id = "cpu." + loads[w];
    const std::string load = w == 0 ? "1 client, atrace_emit of one 4 KiB file one at a time, " + std::to_string(p.sync_events) + " events/round"
                                    : std::to_string(p.clients[w - 1]) + " client processes looping atrace_emit, " +
                                          std::to_string(p.conc_ms) + " ms/run";
    auto& before = sides[2 * w].values;
    auto& after = sides[2 * w + 1].values;
    for (size_t k = 0; k < 2; ++k) {
      table.AddValue(id + "." + subjects[k].name,
                     "daemon CPU (all threads, user+system, deletes included) per event, " + bname[k] + ": " + load,
                     "us/event", sides[2 * w + k].values);
    }
    table.AddValue(id + ".after_vs_before", "daemon CPU per event after / before, per round", "x", Ratios(after, before));
    table.AddValue(id + ".rate_after_vs_before", "events/s the clients got, after / before, per round", "x",
                   Ratios(extras[w][1].eps, extras[w][0].eps));
    for (size_t k = 0; k < 2; ++k) {
      table.AddValue(id + ".peak_rss." + subjects[k].name, peak + ", " + subjects[k].name, "MiB", extras[w][k].peak_mib);
    }
    table.AddValue(id + ".peak_rss.after_vs_before", "peak RSS after / before, per round", "x",
                   Ratios(extras[w][1].peak_mib, extras[w][0].peak_mib));
    for (size_t k = 0; k < 2; ++k) {
      table.AddValue(id + ".rss_after." + subjects[k].name, "VmRSS once the side and its deletes are done, " + subjects[k].name,
                     "MiB", extras[w][k].rss_mib);
    }
  }
  for (size_t k = 0; k < 2; ++k) {
    table.AddValue("cpu.idle_rss." + subjects[k].name, "VmRSS idle after 10 events, before the rounds, " + subjects[k].name,
                   "MiB", idle[k]);
  }
  // The same CPU in the kernel's tick counts over the whole case, as a cross-check.
  for (size_t k = 0; k < 2; ++k) {
    Subject& s = subjects[k];
    const long ticks = StatTicks(s.daemon->pid()) - s.ticks0;
    const double us = static_cast<double>(ticks) * 1e6 / static_cast<double>(::sysconf(_SC_CLK_TCK)) / static_cast<double>(s.events);
    table.AddValue("cpu.stat_ticks." + s.name,
                   "utime+stime from /proc/PID/stat over every side (warm-up included) / its " + std::to_string(s.events) +
                       " events, " + s.name,
                   "us/event", {us});
    double top = 0;
    for (const auto& x : extras) {
      for (double v : x[k].peak_mib) top = std::max(top, v);
    }
    table.AddValue("cpu.peak_rss_max." + s.name, "the highest peak RSS of all its measured sides, " + s.name, "MiB", {top});
  }
  for (auto& s : subjects) {
    s.sync.reset();
    const int rc = s.daemon->Stop();
    if (rc != 0) Fail("cpu: atraced (" + s.name + ") did not stop cleanly (" + std::to_string(rc) + ")");
  }
  RemoveTree(p.work + "/cpu-before");
  RemoveTree(p.work + "/cpu-after");
}

}  // namespace atraced_bench
