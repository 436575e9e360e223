#include "bench_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace atraced_bench {

void Fail(const std::string& what) { throw BenchError(what); }

std::vector<uint8_t> Pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>('a' + i % 26);
  for (size_t i = 63; i < n; i += 64) v[i] = '\n';
  return v;
}

bool ReadFull(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::read(fd, b, n);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) errno = 0;
    if (r <= 0) return false;
    b += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteFull(int fd, const void* p, size_t n) {
  auto* b = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t r = ::write(fd, b, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

double DirectAppendMiBps(const std::string& path, const std::vector<uint8_t>& chunk, size_t chunks) {
  const double mib = static_cast<double>(chunks * chunk.size()) / (1 << 20);
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) Fail("open " + path);
  int64_t t0 = NowNs();
  for (size_t i = 0; i < chunks; ++i) {
    size_t off = 0;
    while (off < chunk.size()) {
      ssize_t w = ::write(fd, chunk.data() + off, chunk.size() - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) Fail("baseline bulk write");
      off += static_cast<size_t>(w);
    }
  }
  int64_t t1 = NowNs();
  ::close(fd);
  ::unlink(path.c_str());
  return mib / (static_cast<double>(t1 - t0) / 1e9);
}

int64_t NowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int64_t WallUs() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  return int64_t{tv.tv_sec} * 1000000 + tv.tv_usec;
}

double PercentileSorted(const std::vector<double>& sorted, double pct) {
  if (sorted.empty()) return 0;
  // Nearest rank: the smallest value with at least pct% of the values at or below it.
  size_t rank = static_cast<size_t>(std::ceil(pct / 100.0 * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

Summary Summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  // Quartiles by linear interpolation (so 5 rounds give meaningful p25/p75).
  auto q = [&](double p) {
    double pos = p * static_cast<double>(n - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, n - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.p25 = q(0.25);
  s.p75 = q(0.75);
  return s;
}

std::vector<double> Ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (b[i] != 0) r.push_back(a[i] / b[i]);
  }
  return r;
}

std::vector<double> Sum(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(a[i] + b[i]);
  return r;
}

void Table::Add(Row row) { rows_.push_back(std::move(row)); }

void Table::AddValue(const std::string& id, const std::string& what, const std::string& unit,
                     const std::vector<double>& values, Goal goal, double target) {
  Row r;
  r.id = id;
  r.what = what;
  r.unit = unit;
  r.s = Summarize(values);
  r.goal = goal;
  r.target = target;
  rows_.push_back(std::move(r));
}

void Table::AddText(const std::string& id, const std::string& what, const std::string& text) {
  Row r;
  r.id = id;
  r.what = what;
  r.has_value = false;
  r.text = text;
  rows_.push_back(std::move(r));
}

namespace {

std::string Num(double v) {
  char buf[64];
  double a = std::fabs(v);
  if (a == 0) {
    std::snprintf(buf, sizeof buf, "0");
  } else if (a >= 100000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 100) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else if (a >= 1) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", v);
  }
  return buf;
}

}  // namespace

int Table::Print(FILE* out) const {
  int missed = 0;
  std::fprintf(out, "%-34s %10s %21s %21s %-9s %-9s %-7s  %s\n", "case", "median", "IQR (p25..p75)",
               "min..max", "unit", "target", "verdict", "what");
  for (const Row& r : rows_) {
    if (!r.has_value) {
      std::fprintf(out, "%-34s %10s %21s %21s %-9s %-9s %-7s  %s: %s\n", r.id.c_str(), "-", "-", "-", "-", "-", "-",
                   r.what.c_str(), r.text.c_str());
      continue;
    }
    std::string iqr = Num(r.s.p25) + ".." + Num(r.s.p75);
    std::string range = Num(r.s.min) + ".." + Num(r.s.max);
    std::string target = "-", verdict = "-";
    if (r.goal != Goal::kNone) {
      target = (r.goal == Goal::kAtMost ? "<= " : ">= ") + Num(r.target);
      bool ok = r.s.n > 0 && (r.goal == Goal::kAtMost ? r.s.median <= r.target : r.s.median >= r.target);
      verdict = ok ? "met" : "MISSED";
      if (!ok) ++missed;
    }
    std::fprintf(out, "%-34s %10s %21s %21s %-9s %-9s %-7s  %s (n=%zu)\n", r.id.c_str(), Num(r.s.median).c_str(),
                 iqr.c_str(), range.c_str(), r.unit.c_str(), target.c_str(), verdict.c_str(), r.what.c_str(), r.s.n);
  }
  return missed;
}

// ---- the daemon ------------------------------------------------------------------------

Daemon::~Daemon() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool SocketAccepts(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

int64_t Daemon::Start(const Options& options, std::string* error, int timeout_ms) {
  options_ = options;
  std::vector<std::string> args{options.binary, "--root", options.root, "--socket", options.socket,
                                "--record-num", std::to_string(options.record_num)};
  args.insert(args.end(), options.extra.begin(), options.extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::unlink(options.socket.c_str());
  const pid_t parent = ::getpid();
  const int64_t t0 = NowNs();
  pid_ = ::fork();
  if (pid_ < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    return -1;
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int fd = ::open(options.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 2);
      ::dup2(fd, 1);
    }
    for (const char* v : {"ASCEND_WORK_PATH", "ASCEND_TRACE_RECORD_NUM", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
                          "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "ATRACED_SOCKET"}) {
      ::unsetenv(v);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const int64_t deadline = t0 + int64_t{timeout_ms} * 1000000;
  while (NowNs() < deadline) {
    if (SocketAccepts(options.socket)) return NowNs() - t0;
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = "atraced exited during start-up; log tail:\n" + ReadFileTail(options.log, 2000);
      return -1;
    }
    ::usleep(200);
  }
  *error = "atraced did not accept within " + std::to_string(timeout_ms) + " ms; log tail:\n" +
           ReadFileTail(options.log, 2000);
  return -1;
}

int Daemon::Stop(int timeout_ms) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const int64_t deadline = NowNs() + int64_t{timeout_ms} * 1000000;
  int status = 0;
  while (NowNs() < deadline) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    ::usleep(1000);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

long Daemon::RssKiB() const {
  if (pid_ <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// ---- files ------------------------------------------------------------------------------

bool MakeDirs(const std::string& path) {
  std::string cur;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    if (!cur.empty() && ::mkdir(cur.c_str(), 0750) != 0 && errno != EEXIST) return false;
    pos = next + 1;
  }
  return true;
}

namespace {

bool RemoveAt(int parent, const char* name) {
  int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    if (errno == ENOTDIR || errno == ELOOP) return ::unlinkat(parent, name, 0) == 0 || errno == ENOENT;
    return false;
  }
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return false;
  }
  bool ok = true;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) {
      ok = RemoveAt(::dirfd(d), e->d_name) && ok;
    } else if (::unlinkat(::dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
      ok = false;
    }
  }
  ::closedir(d);
  return (::unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT) && ok;
}

}  // namespace

bool RemoveTree(const std::string& path) { return RemoveAt(AT_FDCWD, path.c_str()); }

long CountEventDirs(const std::string& trace_dir) {
  DIR* top = ::opendir(trace_dir.c_str());
  if (top == nullptr) return -1;
  long n = 0;
  while (dirent* p = ::readdir(top)) {
    if (p->d_name[0] == '.' || (p->d_type != DT_DIR && p->d_type != DT_UNKNOWN)) continue;
    int fd = ::openat(::dirfd(top), p->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // removed meanwhile, or not a directory
    DIR* sub = ::fdopendir(fd);
    if (sub == nullptr) {
      ::close(fd);
      continue;
    }
    while (dirent* e = ::readdir(sub)) {
      if (e->d_name[0] != '.' && (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN)) ++n;
    }
    ::closedir(sub);
  }
  ::closedir(top);
  return n;
}

bool WaitForEventDirs(const std::string& trace_dir, long at_most, int timeout_ms) {
  const int64_t until = NowNs() + int64_t{timeout_ms} * 1000000;
  for (;;) {
    const long n = CountEventDirs(trace_dir);
    if (n >= 0 && n <= at_most) return true;
    if (NowNs() > until) return false;
    ::usleep(500);
  }
}

std::string ReadFileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string TraceTimeAt(int64_t unix_us, bool utc) {
  time_t secs = static_cast<time_t>(unix_us / 1000000);
  long us = static_cast<long>(unix_us % 1000000);  // mmm + uuu are the 6 digits of microseconds
  struct tm tm {};
  if (utc) {
    ::gmtime_r(&secs, &tm);
  } else {
    ::localtime_r(&secs, &tm);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d%02d%02d%02d%06ld", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, us);
  return buf;
}

std::string TraceTimeNow() { return TraceTimeAt(WallUs()); }

// ---- the machine ------------------------------------------------------------------------

namespace {

std::string FsTypeName(unsigned long magic) {
  switch (magic) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794c7630: return "overlayfs";
    case 0x6969: return "nfs";
    case 0xF2F52010: return "f2fs";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "fs-magic-0x%lx", magic);
      return buf;
    }
  }
}

}  // namespace

std::string MachineLine(const std::string& work_dir) {
  utsname u{};
  ::uname(&u);
  struct statfs sf {};
  std::string fs = ::statfs(work_dir.c_str(), &sf) == 0 ? FsTypeName(static_cast<unsigned long>(sf.f_type)) : "?";
  std::string cpu = "?";
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      cpu = Trim(line.substr(line.find(':') + 1));
      break;
    }
  }
  // The mount options of the file system holding the scratch root (longest matching prefix).
  std::string options;
  {
    std::ifstream mounts("/proc/mounts");
    std::string dev, dir, type, opts;
    size_t best = 0;
    while (mounts >> dev >> dir >> type >> opts) {
      std::string rest;
      std::getline(mounts, rest);
      bool prefix = work_dir.rfind(dir, 0) == 0 && (dir == "/" || work_dir.size() == dir.size() || work_dir[dir.size()] == '/');
      if (prefix && dir.size() >= best) {
        best = dir.size();
        options = dev + " " + dir + " " + type + " (" + opts + ")";
      }
    }
  }
  return std::string("nproc ") + std::to_string(::get_nprocs()) + ", cpu " + cpu + ", kernel " + u.release +
         ", root " + work_dir + " on " + fs + "; mount: " + options;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

int AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

unsigned long RaiseNofile() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  return static_cast<unsigned long>(rl.rlim_cur);
}

void Interleave(std::vector<Side>& sides, int rounds) {
  for (auto& s : sides) s.run();  // warm-up, not recorded
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < sides.size(); ++k) {
      Side& s = sides[(k + static_cast<size_t>(r)) % sides.size()];
      s.values.push_back(s.run());
    }
  }
}

}  // namespace atraced_bench
