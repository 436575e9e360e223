#include "storm_bench.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "atraced/atrace_client.h"

namespace atraced_bench {
namespace {

struct StormResult {
  double wall_ms = 0;
  std::vector<double> status_ms;  // another client's STATUS round trips during the storm
};

// Starts `n` children of `mode`, waits until each filled its rings, then lets them all go
// at once (closing the shared go pipe) and waits until every one exited: its save is on
// disk by then (AtraceEventReportSync returns after the daemon's reply).
StormResult RunStorm(const StormParams& p, const std::string& mode, const std::string& socket, int n,
                     const std::string& inproc_dir) {
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
  std::atomic<bool> done{false};
  std::thread watcher;
  atrace_client* status_client = nullptr;
  if (mode == "atraced") {
    atrace_client_options o;
    atrace_client_options_init(&o);
    o.socket_path = socket.c_str();
    if (atrace_client_open(&o, &status_client) != 0) Fail("storm: status client");
    watcher = std::thread([&] {
      while (!done) {
        atrace_status s{};
        const int64_t t = NowNs();
        if (atrace_client_status(status_client, &s) != 0) return;
        out.status_ms.push_back(static_cast<double>(NowNs() - t) / 1e6);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  const int64_t t0 = NowNs();
  ::close(go[1]);
  for (pid_t pid : children) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      Fail("storm: a " + mode + " child failed (status " + std::to_string(status) + ")");
    }
  }
  out.wall_ms = static_cast<double>(NowNs() - t0) / 1e6;
  done = true;
  if (watcher.joinable()) watcher.join();
  if (status_client) atrace_client_close(status_client);
  return out;
}

}  // namespace

void StormCase(const StormParams& p, Table& table) {
  std::vector<std::unique_ptr<Daemon>> daemons;
  for (int w : p.workers) {
    Daemon::Options o;
    o.binary = p.daemon_binary;
    o.root = p.work + "/storm/w" + std::to_string(w) + "/root";
    o.socket = p.work + "/storm-w" + std::to_string(w) + ".sock";
    o.log = p.work + "/storm-w" + std::to_string(w) + ".log";
    o.record_num = 1000;  // the save is measured, not aging
    o.extra = {"--io-workers", std::to_string(w), "--rate-limit-burst", "0"};
    daemons.push_back(std::make_unique<Daemon>());
    std::string error;
    if (daemons.back()->Start(o, &error) < 0) Fail("storm daemon: " + error);
  }
  const std::string inproc_dir = p.work + "/storm/inproc";
  if (!MakeDirs(inproc_dir)) Fail("mkdir " + inproc_dir);
  for (int n : p.processes) {
    std::vector<Side> sides;
    std::vector<std::vector<double>> status(p.workers.size());
    sides.push_back({"cann", [&, n] { return RunStorm(p, "cann", "", n, inproc_dir).wall_ms; }, {}});
    sides.push_back({"inproc", [&, n] { return RunStorm(p, "inproc", "", n, inproc_dir).wall_ms; }, {}});
    for (size_t k = 0; k < p.workers.size(); ++k) {
      sides.push_back({"atraced.w" + std::to_string(p.workers[k]), [&, n, k] {
                         StormResult r = RunStorm(p, "atraced", daemons[k]->socket(), n, "");
                         status[k].insert(status[k].end(), r.status_ms.begin(), r.status_ms.end());
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
    for (size_t k = 0; k < p.workers.size(); ++k) {
      const std::string w = std::to_string(p.workers[k]);
      const std::vector<double>& ours = sides[k + 2].values;
      table.AddValue(key + ".atraced_w" + w, "one AtraceEventReportSync each, atraced --io-workers " + w + ": " + what,
                     "ms", ours);
      table.AddValue(key + ".vs_cann_w" + w, "atraced (--io-workers " + w + ") / CANN's way, per round", "x",
                     Ratios(ours, sides[0].values), Goal::kAtMost, 0.15);
      table.AddValue(key + ".vs_inproc_w" + w, "atraced (--io-workers " + w + ") / one buffered write per file", "x",
                     Ratios(ours, sides[1].values));
      std::sort(status[k].begin(), status[k].end());
      const double p99 = status[k].empty() ? 0 : PercentileSorted(status[k], 99);
      table.AddValue(key + ".status_p99_w" + w,
                     "another client's STATUS round trip during the storm, p99 over all rounds (--io-workers " + w + ")",
                     "ms", {p99}, Goal::kAtMost, 10);
    }
  }
  for (auto& d : daemons) d->Stop();
}

}  // namespace atraced_bench
