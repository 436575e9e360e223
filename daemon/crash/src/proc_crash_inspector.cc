#include "atraced/crash/proc_crash_inspector.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>

#include "atraced/base/unique_fd.h"
#include "atraced/crash/unwind_helper.h"
#include "atraced/proto/stack_dump_file.h"
#include "atraced/proto/stack_report.h"

namespace atraced::crash {
namespace {

using Clock = std::chrono::steady_clock;

// What the report keeps of each section (the helper bounds them too). The backtrace holds
// every thread's block (proto/stack_report.h bounds each), not a fixed number of bytes that
// would cut a large process's threads off.
constexpr size_t kMaxThreadsBytes = 128 << 10;
constexpr size_t kMaxMapsBytes = (1 << 20) + 256;  // the helper's 1 MiB and its "cut" line
constexpr size_t kMaxBacktraceBytes = proto::kMaxStackSection;
constexpr size_t kMaxCountsBytes = 256;
constexpr size_t kMaxOutputBytes = kMaxThreadsBytes + kMaxMapsBytes + kMaxBacktraceBytes + kMaxCountsBytes;
static_assert(kMaxThreadsBytes + kMaxMapsBytes + kMaxBacktraceBytes + (64 << 10) <= proto::kMaxStackDumpText,
              "a dump's report, every thread's stack in it, fits the stack-dump file");

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

std::string Capped(std::string_view text, size_t limit) {
  return std::string(text.substr(0, limit));
}

// The backtrace within `limit`: cut after the last whole thread's block that fits, and saying so.
std::string CappedAtBlock(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  const size_t end = text.rfind("\n\n", limit - 2);
  std::string kept(text.substr(0, end == std::string_view::npos ? 0 : end + 2));
  return kept + proto::NoteLine("the stacks are cut at " + std::to_string(limit) +
                                " bytes of the helper's output: the threads after this line are not written");
}

// Splits the helper's output into its sections. Anything before the first mark (a stray
// message on stderr) goes to the backtrace, where a reader looks for trouble.
void Split(const std::string& out, CrashFacts* f, bool* have_threads, bool* have_maps, std::string* counts) {
  std::string stray;
  std::string* into = &stray;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t mark = out.find(kSectionMark, pos);
    // A mark counts only at the start of a line.
    while (mark != std::string::npos && mark != 0 && out[mark - 1] != '\n') mark = out.find(kSectionMark, mark + 1);
    into->append(out, pos, mark == std::string::npos ? std::string::npos : mark - pos);
    if (mark == std::string::npos) break;
    const size_t eol = out.find('\n', mark);
    const std::string_view name = std::string_view(out).substr(mark + 1, (eol == std::string::npos ? out.size() : eol) - mark - 1);
    if (name == "threads") {
      into = &f->threads;
      *have_threads = true;
    } else if (name == "maps") {
      into = &f->maps;
      *have_maps = true;
    } else if (name == "counts") {
      into = counts;
    } else {
      into = &f->backtrace;
    }
    if (eol == std::string::npos) break;
    pos = eol + 1;
  }
  f->threads = Capped(f->threads, kMaxThreadsBytes);
  f->maps = Capped(f->maps, kMaxMapsBytes);
  f->backtrace = CappedAtBlock(stray + f->backtrace, kMaxBacktraceBytes);
  *counts = Capped(*counts, kMaxCountsBytes);
}

// What a live look says of its threads: read, as the helper counted them (its counts
// section); written, as the kept backtrace holds them. A helper killed at the deadline
// printed no counts: what it printed is what it read, of the threads the threads section lists.
void CountLiveStacks(const std::string& counts, CrashFacts* f) {
  const proto::StackSection kept = proto::ReadStackSection(f->backtrace);
  uint64_t longest = 0;
  for (const proto::ThreadStack& t : kept.threads) {
    if (!t.held_us) continue;
    ++f->stacks_written;
    longest = std::max(longest, *t.held_us);
  }
  f->threads_written = static_cast<uint32_t>(kept.threads.size());
  if (const auto helper = proto::ParseStackCounts(counts)) {
    f->thread_count = helper->threads;
    f->stacks_read = helper->read;
    f->max_stop_us = helper->max_stop_us;
    return;
  }
  uint32_t listed = 0;  // the threads section's "TID NAME" lines
  for (size_t at = 0; at < f->threads.size();) {
    listed += f->threads[at] >= '0' && f->threads[at] <= '9';
    const size_t eol = f->threads.find('\n', at);
    if (eol == std::string::npos) break;
    at = eol + 1;
  }
  f->thread_count = std::max(listed, f->threads_written);
  f->stacks_read = f->stacks_written;
  f->max_stop_us = static_cast<uint32_t>(std::min<uint64_t>(longest, UINT32_MAX));
}

}  // namespace

CrashFacts ProcCrashInspector::Inspect(const CrashTarget& target, std::chrono::milliseconds budget) {
  const bool unwind = budget.count() > 0;
  const auto allowed = unwind ? budget : kFactsOnlyDeadline;
  const auto deadline = Clock::now() + allowed;
  auto failed = [](const std::string& why) {
    return CrashFacts{"(not listed: " + why + ")\n", "(none: " + why + ")\n", "(not read: " + why + ")\n"};
  };
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return failed(std::string("pipe: ") + std::strerror(errno));
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // the listening socket is not CLOEXEC under systemd
  const std::string pid_text = std::to_string(target.pid), tid_text = std::to_string(target.tid),
                    uid_text = std::to_string(target.uid), gid_text = std::to_string(target.gid);
  const char* mode = !unwind         ? kFactsOnlyArg
                     : target.live   ? kLiveArg
                     : (all_threads_ || target.every_thread) ? kAllThreadsArg
                                                             : kUnwindArg;
  const char* argv[] = {helper_.c_str(),  kUnwindHelperFlag, pid_text.c_str(), tid_text.c_str(),
                        uid_text.c_str(), gid_text.c_str(),  mode,             nullptr};
  const char* envp[] = {nullptr};  // no DEBUGINFOD_URLS: the helper never goes to the network
  pid_t child = -1;
  const int spawned = ::posix_spawn(&child, helper_.c_str(), &actions, nullptr, const_cast<char* const*>(argv),
                                    const_cast<char* const*>(envp));
  ::posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (spawned != 0) return failed("cannot start " + helper_ + ": " + std::strerror(spawned));

  std::string out;
  bool timed_out = false;
  char buf[16384];
  for (;;) {
    pollfd p{read_end.get(), POLLIN, 0};
    const int r = ::poll(&p, 1, RemainingMs(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < kMaxOutputBytes) out.append(buf, std::min(static_cast<size_t>(n), kMaxOutputBytes - out.size()));
  }
  // Killing the tracer detaches it: the process goes on to re-raise either way.
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  const auto reap_deadline = Clock::now() + std::chrono::seconds(1);
  pid_t reaped = 0;
  while ((reaped = ::waitpid(child, &status, WNOHANG)) == 0 && Clock::now() < reap_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  CrashFacts f;
  bool have_threads = false, have_maps = false;
  std::string counts;
  Split(out, &f, &have_threads, &have_maps, &counts);
  std::string why;
  if (timed_out) {
    why = (unwind ? "unwinding stopped: it took longer than " : "the unwind helper took longer than ") +
          std::to_string(allowed.count()) + " ms";
  } else if (reaped == child && WIFSIGNALED(status)) {
    why = "the unwind helper died of signal " + std::to_string(WTERMSIG(status));
  } else {
    why = "the unwind helper printed nothing";
  }
  if (!have_threads) f.threads = "(not listed: " + why + ")\n";
  if (!have_maps) f.maps = "(not read: " + why + ")\n";
  if (timed_out || (reaped == child && WIFSIGNALED(status))) {
    f.backtrace += "(" + why + ")\n";
  } else if (f.backtrace.empty()) {
    f.backtrace = "(none: " + why + ")\n";
  }
  if (target.live) CountLiveStacks(counts, &f);
  return f;
}

}  // namespace atraced::crash
