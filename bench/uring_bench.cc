// io_uring against the I/O worker pool for the file work of an event (issue 22): each job
// creates one file in an event directory, writes 4 KiB and closes it (what a worker does for
// a small event or a save's file). Three ways, run side by side, rounds interleaved:
//   inline   the loop thread does the system calls itself (today's event path);
//   pool     the loop hands the job to one worker thread (IoPool's shape: a mutex-guarded
//            queue, a condition variable, completions back through an eventfd);
//   uring    the loop submits openat (direct descriptor), write and close as one linked
//            chain to io_uring and reaps completions, no thread of its own.
// Each in two modes: one job at a time (the loop waits for each, a synchronous event) and
// 64 in flight (a storm). Prints jobs per second per round, and the medians.
//
//   atraced_uring_bench [DIR] [JOBS]     (DIR default /dev/shm; JOBS per round, default 20000)
//
// Built only where liburing is installed (bench/CMakeLists.txt); io_uring may be refused at
// run time (a seccomp profile, kernel.io_uring_disabled): it then says so and measures the
// other two.
#include <fcntl.h>
#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBytes = 4096;
char g_data[kBytes];

int DoJob(int dirfd, const std::string& name) {
  const int fd = ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) return -errno;
  const ssize_t n = ::write(fd, g_data, kBytes);
  ::close(fd);
  return n == static_cast<ssize_t>(kBytes) ? 0 : -EIO;
}

class Pool {
 public:
  Pool() : efd_(::eventfd(0, EFD_CLOEXEC)), worker_([this] { Run(); }) {}
  ~Pool() {
    {
      std::lock_guard l(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    worker_.join();
    ::close(efd_);
  }
  void Submit(std::function<void()> job) {
    {
      std::lock_guard l(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }
  // Waits for completions; returns how many.
  uint64_t Reap() {
    uint64_t n = 0;
    if (::read(efd_, &n, sizeof n) != sizeof n) return 0;
    return n;
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock l(mu_);
        cv_.wait(l, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
      const uint64_t one = 1;
      (void)!::write(efd_, &one, sizeof one);
    }
  }
  int efd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread worker_;
};

struct Round {
  const char* name;
  double jobs_per_s = 0;
};

std::string FreshDir(const std::string& base, const char* tag, int round) {
  const std::string dir = base + "/" + tag + "_" + std::to_string(round) + "_" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0750);
  return dir;
}

double RunInline(int dirfd, int jobs) {
  const auto t0 = Clock::now();
  for (int i = 0; i < jobs; ++i) {
    if (DoJob(dirfd, "f" + std::to_string(i)) != 0) std::abort();
  }
  return jobs / std::chrono::duration<double>(Clock::now() - t0).count();
}

double RunPool(Pool& pool, int dirfd, int jobs, int depth) {
  const auto t0 = Clock::now();
  int submitted = 0, done = 0;
  while (done < jobs) {
    while (submitted < jobs && submitted - done < depth) {
      const std::string name = "f" + std::to_string(submitted++);
      pool.Submit([dirfd, name] {
        if (DoJob(dirfd, name) != 0) std::abort();
      });
    }
    done += static_cast<int>(pool.Reap());
  }
  return jobs / std::chrono::duration<double>(Clock::now() - t0).count();
}

// openat into a direct descriptor slot, write through it, close it: one linked chain.
bool QueueChain(io_uring& ring, int dirfd, const std::string& name, unsigned slot) {
  io_uring_sqe* open = io_uring_get_sqe(&ring);
  io_uring_sqe* write = io_uring_get_sqe(&ring);
  io_uring_sqe* close = io_uring_get_sqe(&ring);
  if (!open || !write || !close) return false;
  // No O_CLOEXEC: a direct descriptor is never in the file table (the kernel refuses the flag).
  io_uring_prep_openat_direct(open, dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0640, slot);
  open->flags |= IOSQE_IO_LINK;
  io_uring_prep_write(write, static_cast<int>(slot), g_data, kBytes, 0);
  write->flags |= IOSQE_FIXED_FILE | IOSQE_IO_LINK;
  io_uring_prep_close_direct(close, slot);
  close->user_data = slot + 1;  // the chain's last: one job done, its slot free again
  open->user_data = write->user_data = 0;
  return true;
}

double RunUring(io_uring& ring, int dirfd, int jobs, int depth) {
  std::vector<std::string> names(static_cast<size_t>(jobs));
  for (int i = 0; i < jobs; ++i) names[static_cast<size_t>(i)] = "f" + std::to_string(i);
  std::vector<unsigned> free_slots;
  for (int s = depth - 1; s >= 0; --s) free_slots.push_back(static_cast<unsigned>(s));
  const auto t0 = Clock::now();
  int submitted = 0, done = 0;
  while (done < jobs) {
    int queued = 0;
    while (submitted < jobs && !free_slots.empty()) {
      const unsigned slot = free_slots.back();
      free_slots.pop_back();
      if (!QueueChain(ring, dirfd, names[static_cast<size_t>(submitted)], slot)) std::abort();
      ++submitted;
      ++queued;
    }
    if (io_uring_submit_and_wait(&ring, 1) < 0) std::abort();
    io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      if (cqe->res < 0) {
        std::fprintf(stderr, "uring: %s\n", std::strerror(-cqe->res));
        std::abort();
      }
      if (cqe->user_data != 0) {
        ++done;
        free_slots.push_back(static_cast<unsigned>(cqe->user_data - 1));
      }
    }
    io_uring_cq_advance(&ring, seen);
    (void)queued;
  }
  return jobs / std::chrono::duration<double>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string base = argc > 1 ? argv[1] : "/dev/shm";
  const int jobs = argc > 2 ? std::atoi(argv[2]) : 20000;
  const int rounds = 5;
  std::memset(g_data, 'x', sizeof g_data);
  io_uring ring{};
  const int uring_rc = io_uring_queue_init(256, &ring, 0);
  bool uring = uring_rc == 0 && io_uring_register_files_sparse(&ring, 64) == 0;
  if (!uring) std::printf("io_uring not usable here (%s): measuring inline and pool only\n", std::strerror(-uring_rc));
  Pool pool;
  std::vector<double> inline1, pool1, pool64, uring1, uring64;
  for (int r = 0; r < rounds; ++r) {
    auto measure = [&](const char* tag, auto&& fn, std::vector<double>& out) {
      const std::string dir = FreshDir(base, tag, r);
      const int dirfd = ::open(dir.c_str(), O_DIRECTORY | O_CLOEXEC);
      out.push_back(fn(dirfd));
      ::close(dirfd);
      std::string rm = "rm -rf '" + dir + "'";
      if (std::system(rm.c_str()) != 0) std::abort();
    };
    measure("inline", [&](int d) { return RunInline(d, jobs); }, inline1);
    measure("pool1", [&](int d) { return RunPool(pool, d, jobs, 1); }, pool1);
    measure("pool64", [&](int d) { return RunPool(pool, d, jobs, 64); }, pool64);
    if (uring) {
      measure("uring1", [&](int d) { return RunUring(ring, d, jobs, 1); }, uring1);
      measure("uring64", [&](int d) { return RunUring(ring, d, jobs, 64); }, uring64);
    }
  }
  auto row = [](const char* what, const std::vector<double>& v) {
    if (v.empty()) return;
    std::printf("%-44s median %8.0f jobs/s  rounds:", what, Median(v));
    for (double x : v) std::printf(" %.0f", x);
    std::printf("\n");
  };
  std::printf("job: openat(O_CREAT) + write 4 KiB + close in %s, %d jobs/round, %d rounds\n", base.c_str(), jobs, rounds);
  row("inline on the loop thread", inline1);
  row("pool (1 worker), one job at a time", pool1);
  row("pool (1 worker), 64 in flight", pool64);
  row("io_uring, one chain at a time", uring1);
  row("io_uring, 64 chains in flight", uring64);
  if (uring) io_uring_queue_exit(&ring);
  return 0;
}
