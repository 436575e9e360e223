#include "storm_bench.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

#include "atraced/atrace_client.h"

namespace atraced_bench {
namespace {

struct StormResult {
  double wall_ms = 0;
  double loop_cpu_ms = 0;    // the storm daemon's event loop, on CPU during the storm
  double others_cpu_ms = 0;  // its other threads
  std::vector<double> status_ms;     // another client's STATUS round trips to the storm's daemon
  std::vector<double> bystander_ms;  // the same to an idle daemon meanwhile
};

// A thread that asks one daemon STATUS every millisecond until Finish, timing each. Finish
// runs from the destructor too, so a storm that fails midway does not leave it asking.
class StatusProber {
 public:
  void Start(const std::string& socket) {
    atrace_client_options o;
    atrace_client_options_init(&o);
    o.socket_path = socket.c_str();
    if (atrace_client_open(&o, &client_) != 0) Fail("storm: status client for " + socket);
    thread_ = std::thread([this] {
      while (!stop_) {
        atrace_status s{};
        const int64_t t = NowNs();
        if (atrace_client_status(client_, &s) != 0) return;
        ms_.push_back(static_cast<double>(NowNs() - t) / 1e6);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  std::vector<double> Finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (client_) atrace_client_close(client_);
    client_ = nullptr;
    return std::move(ms_);
  }
  ~StatusProber() { Finish(); }

 private:
  std::atomic<bool> stop_{false};
  atrace_client* client_ = nullptr;
  std::thread thread_;
  std::vector<double> ms_;
};

// Time on CPU of the daemon's event loop (its main thread, /proc/PID/task/PID/schedstat's
// first field, in ns) and of all its other threads together (the I/O workers, the remover,
// the unmapper): what a storm costs each side of the split, with nanosecond resolution.
struct DaemonCpu {
  int64_t loop_ns = 0;
  int64_t others_ns = 0;
};

DaemonCpu ReadDaemonCpu(pid_t pid) {
  DaemonCpu out;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task.c_str());
  if (!dir) Fail("storm: cannot list " + task);
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(task + "/" + e->d_name + "/schedstat");
    int64_t ns = 0;
    in >> ns;
    (std::atoi(e->d_name) == pid ? out.loop_ns : out.others_ns) += ns;
  }
  ::closedir(dir);
  return out;
}

double P99(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : PercentileSorted(v, 99);
}

// Starts `n` children of `mode`, waits until each filled its rings, then lets them all go
// at once (closing the shared go pipe) and waits until every one exited: its save is on
// disk by then (AtraceEventReportSync returns after the daemon's reply).
StormResult RunStorm(const StormParams& p, const std::string& mode, const std::string& socket, int n,
                     const std::string& inproc_dir, const std::string& bystander_socket, pid_t daemon_pid = -1) {
  int go[2];
  if (::pipe(go) != 0) Fail("pipe");
  std::vector<pid_t> children;
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    int r[2];
    if (::pipe(r) != 0) Fail("pipe");
    const pid_t pid = ::fork();
    if (pid < 0) Fail("fork");
    if (pid == 0) {
      ::close(go[1]);
      ::close(r[0]);
      ::setenv("ATRACED_SOCKET", socket.c_str(), 1);
      const std::string objects = std::to_string(p.objects), rfd = std::to_string(r[1]), gfd = std::to_string(go[0]);
      ::execl(p.child_binary.c_str(), "atraced_storm_child", mode.c_str(), objects.c_str(), rfd.c_str(), gfd.c_str(),
              inproc_dir.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(r[1]);
    children.push_back(pid);
    ready.push_back(r[0]);
  }
  ::close(go[0]);
  for (int fd : ready) {
    char c;
    if (!ReadFull(fd, &c, 1)) Fail("storm: a child died before it was ready (" + mode + ")");
    ::close(fd);
  }
  StormResult out;
  // Each prober asks one daemon STATUS every millisecond until the storm is over: the storm's
  // own daemon (atraced sides), and an idle bystander daemon that takes no part in the storm
  // (every side), whose round trips are what this machine's scheduler alone costs a STATUS
  // while the storm's processes run.
  StatusProber storm_probe, bystander_probe;
  if (mode == "atraced") storm_probe.Start(socket);
  bystander_probe.Start(bystander_socket);
  const DaemonCpu cpu0 = daemon_pid > 0 ? ReadDaemonCpu(daemon_pid) : DaemonCpu{};
  const int64_t t0 = NowNs();
  ::close(go[1]);
  for (pid_t pid : children) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      Fail("storm: a " + mode + " child failed (status " + std::to_string(status) + ")");
    }
  }
  out.wall_ms = static_cast<double>(NowNs() - t0) / 1e6;
  if (daemon_pid > 0) {
    const DaemonCpu cpu1 = ReadDaemonCpu(daemon_pid);
    out.loop_cpu_ms = static_cast<double>(cpu1.loop_ns - cpu0.loop_ns) / 1e6;
    out.others_cpu_ms = static_cast<double>(cpu1.others_ns - cpu0.others_ns) / 1e6;
  }
  out.status_ms = storm_probe.Finish();
  out.bystander_ms = bystander_probe.Finish();
  return out;
}

}  // namespace

void StormCase(const StormParams& p, Table& table) {
  // One daemon per side: this build with each worker count, then the --before build with the
  // first of them. What each side's storms measured besides their wall time accumulates here.
  struct DaemonSide {
    std::string name;  // "w1", "w2", "before_w1": the rows' suffix
    std::string binary;
    int workers;
    std::string who;  // for the rows' descriptions
    std::vector<double> status, bystander, loop_cpu, others_cpu;
  };
  std::vector<DaemonSide> configs;
  for (int w : p.workers) {
    configs.push_back({"w" + std::to_string(w), p.daemon_binary, w, "atraced --io-workers " + std::to_string(w), {}, {}, {}, {}});
  }
  const std::string first = configs.front().name;
  if (!p.before_binary.empty()) {
    configs.push_back({"before_" + first, p.before_binary, p.workers.front(),
                       "the --before atraced --io-workers " + std::to_string(p.workers.front()), {}, {}, {}, {}});
  }
  // Each daemon has its own root and socket under the scratch directory, named after its side.
  auto start = [&p](const std::string& name, const std::string& binary, std::vector<std::string> extra) {
    Daemon::Options o;
    o.binary = binary;
    o.root = p.work + "/storm/" + name + "/root";
    o.socket = p.work + "/storm-" + name + ".sock";
    o.log = p.work + "/storm-" + name + ".log";
    o.record_num = 1000;  // the save is measured, not aging
    o.extra = std::move(extra);
    auto d = std::make_unique<Daemon>();
    std::string error;
    if (d->Start(o, &error) < 0) Fail("storm daemon " + name + ": " + error);
    return d;
  };
  std::vector<std::unique_ptr<Daemon>> daemons;
  for (const DaemonSide& c : configs) {
    daemons.push_back(start(c.name, c.binary, {"--io-workers", std::to_string(c.workers), "--rate-limit-burst", "0"}));
  }
  // The bystander: idle through every storm, asked STATUS while each runs.
  const std::unique_ptr<Daemon> bystander = start("bystander", p.daemon_binary, {});
  const std::string inproc_dir = p.work + "/storm/inproc";
  if (!MakeDirs(inproc_dir)) Fail("mkdir " + inproc_dir);
  for (int n : p.processes) {
    std::vector<Side> sides;
    std::vector<double> bystander_cann;
    for (DaemonSide& c : configs) {  // each N's rows of its own
      c.status.clear();
      c.bystander.clear();
      c.loop_cpu.clear();
      c.others_cpu.clear();
    }
    sides.push_back({"cann", [&, n] {
                       StormResult r = RunStorm(p, "cann", "", n, inproc_dir, bystander->socket());
                       bystander_cann.insert(bystander_cann.end(), r.bystander_ms.begin(), r.bystander_ms.end());
                       return r.wall_ms;
                     }, {}});
    sides.push_back({"inproc", [&, n] { return RunStorm(p, "inproc", "", n, inproc_dir, bystander->socket()).wall_ms; },
                     {}});
    for (size_t k = 0; k < configs.size(); ++k) {
      sides.push_back({"atraced." + configs[k].name, [&, n, k] {
                         StormResult r =
                             RunStorm(p, "atraced", daemons[k]->socket(), n, "", bystander->socket(), daemons[k]->pid());
                         DaemonSide& c = configs[k];
                         c.loop_cpu.push_back(r.loop_cpu_ms);
                         c.others_cpu.push_back(r.others_cpu_ms);
                         c.status.insert(c.status.end(), r.status_ms.begin(), r.status_ms.end());
                         c.bystander.insert(c.bystander.end(), r.bystander_ms.begin(), r.bystander_ms.end());
                         return r.wall_ms;
                       }, {}});
    }
    Interleave(sides, p.rounds);
    const std::string what = std::to_string(n) + " processes x " + std::to_string(p.objects) +
                             " full default rings (1024 x 112 B), all at once";
    const std::string key = "storm.n" + std::to_string(n);
    table.AddValue(key + ".cann", "CANN's way, each process saving its own rings, 3 writes a record: " + what, "ms",
                   sides[0].values);
    table.AddValue(key + ".inproc", "the same, one buffered write per file (a floor for in-process saving): " + what,
                   "ms", sides[1].values);
    for (size_t k = 0; k < configs.size(); ++k) {
      const DaemonSide& c = configs[k];
      const std::string& who = c.who;
      const std::string& w = c.name;
      const std::vector<double>& ours = sides[k + 2].values;
      table.AddValue(key + ".atraced_" + w, "one AtraceEventReportSync each, " + who + ": " + what, "ms", ours);
      table.AddValue(key + ".vs_cann_" + w, who + " / CANN's way, per round", "x", Ratios(ours, sides[0].values),
                     Goal::kAtMost, 0.15);
      table.AddValue(key + ".vs_inproc_" + w, who + " / one buffered write per file", "x",
                     Ratios(ours, sides[1].values));
      table.AddValue(key + ".loop_cpu_" + w, "the daemon's event loop on CPU during the storm (" + who + ")", "ms",
                     c.loop_cpu);
      table.AddValue(key + ".workers_cpu_" + w, "its other threads (I/O workers, remover, unmapper) on CPU (" + who + ")",
                     "ms", c.others_cpu);
      table.AddValue(key + ".status_p99_" + w, "another client's STATUS round trip during the storm, p99 over all rounds (" +
                     who + ")", "ms", {P99(c.status)}, Goal::kAtMost, 10);
      table.AddValue(key + ".bystander_p99_" + w,
                     "the same to an idle daemon outside the storm, meanwhile: the machine's share of the p99 (" + who +
                         ")", "ms", {P99(c.bystander)});
    }
    table.AddValue(key + ".bystander_p99_cann", "STATUS to an idle daemon while CANN's way runs, p99 over all rounds", "ms",
                   {P99(bystander_cann)});
    if (!p.before_binary.empty()) {
      table.AddValue(key + "." + first + "_vs_before", "atraced " + first + " / the --before atraced " + first + ", per round",
                     "x", Ratios(sides[2].values, sides.back().values));
      table.AddValue(key + ".loop_cpu_" + first + "_vs_before",
                     "the event loop's CPU in the storm, atraced " + first + " / the --before atraced " + first +
                         ", per round",
                     "x",
                     Ratios(configs.front().loop_cpu, configs.back().loop_cpu));
    }
  }
  for (auto& d : daemons) d->Stop();
  bystander->Stop();
}

}  // namespace atraced_bench
