// Small pieces the benchmark harness is built from: a monotonic clock, order statistics over
// rounds, the result table, a child atraced process, and file-system helpers.
// Nothing here depends on the daemon's or the client library's internals.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace atraced_bench {

// A case that cannot go on: thrown by Fail, caught by main, which prints it and exits 1.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void Fail(const std::string& what);

// Sizes every case uses, so sides compared across cases move the same bytes.
constexpr size_t kEventBytes = 4096;     // the one file of an event
constexpr size_t kBulkChunk = 64 * 1024;  // one append of the bulk cases

// n bytes of printable text, a newline every 64: what a trace file holds.
std::vector<uint8_t> Pattern(size_t n);

// Blocking read()/write() of exactly n bytes, retried on EINTR. False on EOF or error
// (errno tells which; 0 for EOF).
bool ReadFull(int fd, void* p, size_t n);
bool WriteFull(int fd, const void* p, size_t n);

// The bulk baseline, CANN-style: `chunks` write()s of `chunk` to a new O_APPEND file at
// `path` (page cache), timing the writes only; then closes and unlinks it. Returns MiB/s.
double DirectAppendMiBps(const std::string& path, const std::vector<uint8_t>& chunk, size_t chunks);

// CLOCK_MONOTONIC in nanoseconds.
int64_t NowNs();
// Wall clock in microseconds since the epoch.
int64_t WallUs();

// Order statistics of one measured quantity over rounds (or over samples).
struct Summary {
  double median = 0, p25 = 0, p75 = 0, min = 0, max = 0;
  size_t n = 0;
};
Summary Summarize(std::vector<double> values);
// Percentile (0..100) of already-sorted values, nearest rank.
double PercentileSorted(const std::vector<double>& sorted, double pct);

// Whether a row has a target and which way it points.
enum class Goal { kNone, kAtMost, kAtLeast };

struct Row {
  std::string id;    // stable, checked by the smoke test
  std::string what;  // human description, including the sizes used
  std::string unit;
  Summary s;
  bool has_value = true;   // false: `text` is printed instead of the numbers
  std::string text;        // for placeholder rows
  Goal goal = Goal::kNone;
  double target = 0;
};

class Table {
 public:
  void Add(Row row);
  void AddValue(const std::string& id, const std::string& what, const std::string& unit,
                const std::vector<double>& values, Goal goal = Goal::kNone, double target = 0);
  void AddText(const std::string& id, const std::string& what, const std::string& text);
  // Prints the table (fixed columns) and returns the number of missed targets.
  int Print(FILE* out) const;

 private:
  std::vector<Row> rows_;
};

// One side of a case: run() measures once and returns the value for that round.
struct Side {
  std::string name;
  std::function<double()> run;
  std::vector<double> values;
};

// Runs every side once unrecorded (warm-up), then `rounds` rounds, each side once per round
// in an order rotated by the round number, so drift on a noisy machine hits every side alike.
void Interleave(std::vector<Side>& sides, int rounds);

// Median of per-round values a[i] / b[i] (paired by round).
std::vector<double> Ratios(const std::vector<double>& a, const std::vector<double>& b);
// Per-round a[i] + b[i] (e.g. the synchronous limit: baseline + one round trip).
std::vector<double> Sum(const std::vector<double>& a, const std::vector<double>& b);

// A child atraced. Killed with SIGKILL if the harness dies (PR_SET_PDEATHSIG).
class Daemon {
 public:
  struct Options {
    std::string binary;
    std::string root;
    std::string socket;
    std::string log;  // stderr goes here (appended)
    uint32_t record_num = 10;
    std::vector<std::string> extra;
  };
  Daemon() = default;
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Forks and execs, then waits until the socket accepts a connection. Returns the time from
  // just before fork() to the first accepted connect() in ns, or -1 on failure (message in
  // *error, with the tail of the log).
  int64_t Start(const Options& options, std::string* error, int timeout_ms = 120000);
  // SIGTERM, then SIGKILL after timeout_ms. Returns the exit status or -1.
  int Stop(int timeout_ms = 10000);
  pid_t pid() const { return pid_; }
  const std::string& socket() const { return options_.socket; }
  const std::string& root() const { return options_.root; }
  // VmRSS from /proc/<pid>/status, in KiB; -1 if unreadable.
  long RssKiB() const;

 private:
  Options options_;
  pid_t pid_ = -1;
};

// True if connect() to a Unix socket at `path` succeeds now.
bool SocketAccepts(const std::string& path);

// mkdir -p with mode 0750.
bool MakeDirs(const std::string& path);
// rm -rf through opendir/unlink/rmdir (no symlink following). True if gone.
bool RemoveTree(const std::string& path);
// Event directories (two levels below `trace_dir`, <root>/atrace), or -1 if it cannot be read.
long CountEventDirs(const std::string& trace_dir);
// Waits until at most `at_most` event directories are left under `trace_dir` (<root>/atrace):
// atraced deletes aged directories in the background, and a case waits for that, outside its
// timing, so that the deletes one side caused do not run during the next side's timing.
// False on timeout.
bool WaitForEventDirs(const std::string& trace_dir, long at_most, int timeout_ms = 30000);
std::string ReadFileTail(const std::string& path, size_t max_bytes);
std::string Trim(const std::string& s);

// CANN's 20-digit time: local time YYYYMMDDhhmmss + milliseconds + microseconds.
std::string TraceTimeNow();
std::string TraceTimeAt(int64_t unix_us, bool utc = false);

// Environment description for the report header.
std::string MachineLine(const std::string& work_dir);
std::string LoadAverage();

// The CPUs this process may run on (sched_getaffinity), at least 1.
int AllowedCpus();

// Raises RLIMIT_NOFILE's soft limit to the hard one; returns the new soft limit.
unsigned long RaiseNofile();

}  // namespace atraced_bench
