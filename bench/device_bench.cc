// atraced_device_bench (issue 24): what device-side traces cost, against the NPU driver
// double and the fake device of tests/support/hal_double (no NPU here).
//
//  1. The time AtraceReportStart adds to set-device, measured inside an application of the
//     drop-in (tests/ascend_trace/device_child.c, "timed-start"): with no driver, with a
//     driver but no device answering, and with a device. Absolute figures; each round is a
//     fresh process, since the driver is looked at once per process.
//  2. One device streaming TS chunks of 512 KiB through the application and atraced to disk,
//     against the same bytes written by a local writer the way CANN's host writes each
//     message (open, append, close), side by side, rounds interleaved.
//
//   atraced_device_bench [--dir DIR] [--rounds N] [--chunks N]     (DIR: BENCH_DIR or /dev/shm)
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "fake_device_process.h"
#include "line_child.h"

using namespace atraced_bench;
using atraced::hal_double::testing::FakeDevice;
using atraced::hal_double::testing::HalDoubleLibDir;
using atraced::hal_double::testing::LineChild;

namespace {

constexpr size_t kChunk = 524256;  // the largest TS chunk a device sends

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(path.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  return out;
}

// The application: commands on stdin, answers on stdout.
class App {
 public:
  explicit App(const std::map<std::string, std::string>& env) : child_(ATRACED_BENCH_DEVICE_CHILD, env, "") {
    if (!child_.started() || child_.Line(std::chrono::seconds(30)).rfind("ready", 0) != 0) {
      Fail("device child did not start");
    }
  }
  ~App() {
    child_.Send("exit");
    child_.Wait();
  }
  pid_t pid() const { return child_.pid(); }
  std::string Call(const std::string& command) {
    if (!child_.Send(command)) Fail("write to device child");
    std::string line = child_.Line(std::chrono::seconds(30));
    if (line.empty()) Fail("device child did not answer " + command);
    return line;
  }

 private:
  LineChild child_;
};

// "start 0 RC NS" -> NS in µs; RC must be `want`.
double StartUs(App& app, int want) {
  const std::string r = app.Call("timed-start 0");
  int dev = 0, rc = 0;
  long long ns = 0;
  if (std::sscanf(r.c_str(), "start %d %d %lld", &dev, &rc, &ns) != 3 || rc != want) Fail("timed-start: " + r);
  return static_cast<double>(ns) / 1000.0;
}

// CANN's host per message: open with O_APPEND, write, close.
double DirectMiBps(const std::string& path, const std::vector<uint8_t>& chunk, size_t chunks) {
  const int64_t t0 = NowNs();
  for (size_t i = 0; i < chunks; ++i) {
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0 || !WriteFull(fd, chunk.data(), chunk.size())) Fail("direct write " + path);
    ::close(fd);
  }
  const int64_t t1 = NowNs();
  ::unlink(path.c_str());
  return static_cast<double>(chunks * chunk.size()) / (1 << 20) / (static_cast<double>(t1 - t0) / 1e9);
}

// The device's chunks of one TS event through the application and the daemon: from the first
// chunk handed to the device to the file on disk holding every byte.
double DeviceMiBps(FakeDevice& device, App& app, const std::string& trace_dir, size_t chunks) {
  const std::string pid = std::to_string(app.pid());
  const int64_t t0 = NowNs();
  std::string time;
  for (size_t i = 0; i < chunks; ++i) {
    const char* seq = i == 0 ? "start" : i + 1 == chunks ? "end" : "mid";
    for (;;) {  // the device queues 16 messages per session: wait for room
      const std::string r = device.Command("ts " + pid + " " + seq + " " + std::to_string(kChunk) + " x");
      if (r.rfind("ok", 0) == 0) {
        if (i == 0) time = r.substr(r.find("time=") + 5, 20);
        break;
      }
      if (r.find("queue is full") == std::string::npos) Fail("fake device: " + r);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  const off_t want = static_cast<off_t>(chunks * kChunk);
  std::string file;
  for (;;) {
    if (file.empty()) {
      for (const auto& proc : ListDir(trace_dir)) {
        const std::string f = trace_dir + "/" + proc + "/schedule_event_" + pid + "_" + time + "/schedule_tracer_ts_0.txt";
        if (::access(f.c_str(), F_OK) == 0) file = f;
      }
    }
    struct stat st {};
    if (!file.empty() && ::stat(file.c_str(), &st) == 0 && st.st_size >= want) break;
    if (NowNs() - t0 > 120'000'000'000LL) Fail("device stream did not reach the disk");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const int64_t t1 = NowNs();
  RemoveTree(file.substr(0, file.rfind('/')));
  return static_cast<double>(want) / (1 << 20) / (static_cast<double>(t1 - t0) / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = std::getenv("BENCH_DIR") != nullptr ? std::getenv("BENCH_DIR") : "/dev/shm";
  int rounds = 5;
  size_t chunks = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--dir") dir = argv[i + 1];
    else if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (a == "--chunks") chunks = static_cast<size_t>(std::atoll(argv[i + 1]));
  }
  ::signal(SIGPIPE, SIG_IGN);
  try {
    const std::string work = dir + "/atraced-device-bench." + std::to_string(::getpid());
    const std::string hdc = work + "/hdc", empty = work + "/hdc-empty";
    if (!MakeDirs(hdc) || !MakeDirs(empty)) Fail("mkdir " + work);
    std::printf("%s\nload %s\n", MachineLine(work).c_str(), LoadAverage().c_str());
    Daemon daemon;
    std::string error;
    if (daemon.Start({ATRACED_BENCH_DAEMON, work + "/root", work + "/atraced.sock", work + "/atraced.log", 10, {}},
                     &error) < 0) {
      Fail(error);
    }
    FakeDevice::Options o;
    o.dir = hdc;
    FakeDevice device(o);
    if (!device.Start()) Fail("fake device did not start");
    // The same device with a 1 ms send period: CANN's 100 ms tick of at most 16 messages
    // bounds a stream at 80 MiB/s, which hides what the host side costs.
    const std::string fast_hdc = work + "/hdc-fast";
    if (!MakeDirs(fast_hdc)) Fail("mkdir " + fast_hdc);
    FakeDevice::Options fast_options;
    fast_options.dir = fast_hdc;
    fast_options.flags = {"--tick-ms", "1"};
    FakeDevice fast(fast_options);
    if (!fast.Start()) Fail("fast fake device did not start");
    const std::map<std::string, std::string> base{{"ATRACED_SOCKET", daemon.socket()}, {"ATRACE_QUIET", "1"}};
    auto with = [&base](std::map<std::string, std::string> more) {
      more.insert(base.begin(), base.end());
      return more;
    };

    std::vector<double> no_driver, no_device, with_device;
    for (int r = 0; r < rounds; ++r) {
      App a(with({}));
      no_driver.push_back(StartUs(a, -5));
      App b(with({{"LD_LIBRARY_PATH", HalDoubleLibDir()}, {"ATRACE_HAL_DOUBLE_DIR", empty}}));
      no_device.push_back(StartUs(b, -5));
      App c(with({{"LD_LIBRARY_PATH", HalDoubleLibDir()}, {"ATRACE_HAL_DOUBLE_DIR", hdc}}));
      with_device.push_back(StartUs(c, 0));
    }
    auto show = [](const char* what, std::vector<double> v) {
      const Summary s = Summarize(std::move(v));
      std::printf("%-44s median %10.1f us  (%.1f .. %.1f)\n", what, s.median, s.min, s.max);
    };
    std::printf("AtraceReportStart, %d fresh processes each:\n", rounds);
    show("  no libascend_hal.so", no_driver);
    show("  driver, no device answering", no_device);
    show("  driver and device (hello + thread)", with_device);

    const std::vector<uint8_t> chunk(kChunk, 'x');
    auto stream = [&](FakeDevice& dev, const std::string& hdc_dir, const char* label) {
      App app(with({{"LD_LIBRARY_PATH", HalDoubleLibDir()}, {"ATRACE_HAL_DOUBLE_DIR", hdc_dir}}));
      if (app.Call("start 0") != "start 0 0") Fail("start 0");
      if (!dev.WaitForSession(app.pid())) Fail("no long link");
      std::vector<double> through, direct, ratio;
      for (int r = 0; r < rounds; ++r) {
        through.push_back(DeviceMiBps(dev, app, daemon.root() + "/atrace", chunks));
        direct.push_back(DirectMiBps(work + "/direct.txt", chunk, chunks));
        ratio.push_back(through.back() / direct.back());
      }
      std::printf("%zu TS chunks of %zu bytes, %s, %d rounds interleaved (MiB/s):\n", chunks, kChunk, label, rounds);
      const Summary d = Summarize(through), w = Summarize(direct), q = Summarize(ratio);
      std::printf("  device -> application -> atraced -> disk    median %8.1f  (%.1f .. %.1f)\n", d.median, d.min, d.max);
      std::printf("  local writer, open/append/close per chunk  median %8.1f  (%.1f .. %.1f)\n", w.median, w.min, w.max);
      std::printf("  device.vs_direct                           median %8.3f  (%.3f .. %.3f)\n", q.median, q.min, q.max);
      app.Call("stop 0");
    };
    stream(device, hdc, "CANN's 100 ms send tick");
    stream(fast, fast_hdc, "a 1 ms send tick");
    std::printf("load %s\n", LoadAverage().c_str());
    daemon.Stop();
    RemoveTree(work);
  } catch (const BenchError& e) {
    std::fprintf(stderr, "atraced_device_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
