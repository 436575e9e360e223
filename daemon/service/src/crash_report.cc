#include "crash_report.h"

#include <sys/wait.h>

#include <cstdio>

#include "atraced/processes/signal_names.h"
#include "atraced/proto/stack_report.h"
#include "atraced/store/trace_time.h"

namespace atraced {
namespace {

// CANN's on-demand dump signal: a dump's report is named and laid out as its stack dump's,
// where asys looks (PROCESS_DUMP sends no signal).
constexpr int32_t kDumpSignalNumber = 35;

// The lines a death report and a crash report share: who the process was.
std::string ProcessLines(const Client& c) {
  return "pid: " + std::to_string(c.peer.pid) + "\n"
         "uid: " + std::to_string(c.peer.uid) + "\n"
         "program: " + c.program + "\n"
         "command line: " + (c.cmdline.empty() ? "(not readable)" : Printable(c.cmdline)) + "\n"
         "start time: " + std::to_string(c.start_ticks) + " clock ticks after boot (/proc/<pid>/stat)\n"
         "connected: " + HumanTime(c.connected) + "\n"
         "last request: " + HumanTime(c.last_activity) + "\n";
}

std::string RingsLine(size_t count, const std::string& names) {
  return "rings: " + std::to_string(count) + (names.empty() ? "" : " (" + names + ")") +
         "; a ring with no record has no file\n";
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The sections CANN's report has, in its form: asys symbolizes [stack] through [maps]
// (stack_format.h). The stacks were unwound by atraced from outside the process; the thread
// list is ours, after them.
std::string CannSections(int32_t pid, int32_t signo, int32_t tid, const CrashFacts& facts) {
  return "\n[process]\n"
         "crash reason:" + std::to_string(signo) + "\n"
         "crash pid:" + std::to_string(pid) + "\n"
         "crash tid:" + std::to_string(tid) + "\n"
         "\n[stack]\n" + facts.backtrace + "\n[maps]\n" + facts.maps + "\n[threads]\n" + facts.threads;
}

}  // namespace

std::string HumanTime(std::chrono::system_clock::time_point when) {
  const std::string t = FormatTraceTime(when);
  return t.substr(0, 4) + "-" + t.substr(4, 2) + "-" + t.substr(6, 2) + " " + t.substr(8, 2) + ":" + t.substr(10, 2) +
         ":" + t.substr(12, 2) + "." + t.substr(14, 3) + "." + t.substr(17, 3);
}

std::string Printable(const std::string& text) { return proto::EscapeStackText(text, /*spaces=*/false); }

std::string DescribeEnd(const ProcessEnd& end, int* signo) {
  *signo = 0;
  if (end.wait_status && WIFSIGNALED(*end.wait_status)) {
    *signo = WTERMSIG(*end.wait_status);
    return "killed by signal " + SignalName(*signo) + (WCOREDUMP(*end.wait_status) ? ", core dumped" : "");
  }
  if (end.wait_status && *end.wait_status != 0 && WIFEXITED(*end.wait_status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(*end.wait_status)) + " without GOODBYE (_exit, or exit "
           "before the library's destructor ran)";
  }
  if (end.wait_status) {
    return "vanished without reporting a signal; its exit status reads 0 (an _exit(0), or a status the daemon may "
           "not read)";
  }
  return "vanished without reporting a signal (SIGKILL, the OOM killer, _exit or a crash are possible); the "
         "daemon cannot tell which: the process was reaped before it could read its status";
}

std::string DeathReportText(const Client& c, const DeathFacts& death, size_t rings, const std::string& ring_names) {
  return "atraced: process " + std::to_string(c.peer.pid) + " (" + c.program +
         ") ended without GOODBYE\n"
         "how: " + death.how + "\n" + (death.oom.empty() ? "" : "oom: " + death.oom + "\n") + ProcessLines(c) +
         "connection closed: " + HumanTime(death.closed) + "\n"
         "written: " + HumanTime(death.written) + "\n" +
         RingsLine(rings, ring_names);
}

std::string CrashReportText(int32_t pid, const Client& holder, const proto::Crash& m, const CrashFacts& facts,
                            std::chrono::system_clock::time_point written, size_t rings, const std::string& ring_names) {
  return "atraced: process " + std::to_string(pid) + " (" + holder.program + ") caught a fatal signal\n"
         "signal: " + SignalName(m.signo) + "\n"
         "code: " + SignalCodeName(m.signo, m.code) + "\n"
         "fault address: " + Hex(m.fault_addr) + "\n"
         "thread: " + std::to_string(m.tid) + "\n" + ProcessLines(holder) +
         "written: " + HumanTime(written) + "\n" +
         RingsLine(rings, ring_names) + CannSections(pid, m.signo, m.tid, facts);
}

std::string StackDumpReportText(int32_t pid, const Client& holder, const proto::StackDump& m, const CrashFacts& facts,
                                std::chrono::system_clock::time_point written, size_t rings,
                                const std::string& ring_names) {
  const bool all = (m.flags & ATR_STACK_DUMP_ALL_THREADS) != 0;
  return "atraced: process " + std::to_string(pid) + " (" + holder.program + ") asked for its stacks; it runs on\n"
         "signal: " + SignalName(m.signo) + ", queued with " + (all ? "0xAABB0003 (every thread)" : "0xAABB0002 (one thread)") +
         "\n"
         "thread: " + std::to_string(m.tid) + "\n" + ProcessLines(holder) +
         "written: " + HumanTime(written) + "\n" +
         RingsLine(rings, ring_names) + CannSections(pid, m.signo, m.tid, facts);
}

// The daemon runs no host tool (npu-smi, hccn_tool: they would run as root on a process's
// word), so its own dumps hold no NPU health: said, with where to get it.
constexpr const char* kHangDumpNoDevices =
    "devices: not recorded (atraced runs no host tool: 'atracectl dump --devices --job J' as the operator "
    "adds npu-smi and hccn_tool link state)\n";

std::string ProcessDumpReportText(const Client& holder, const PeerCredentials& asker, const CrashFacts& facts,
                                  std::chrono::system_clock::time_point written, size_t rings,
                                  const std::string& ring_names, const std::string& hang) {
  const int32_t pid = holder.peer.pid;
  const std::string by = hang.empty() ? "dumped by: uid " + std::to_string(asker.uid) + " (pid " +
                                            std::to_string(asker.pid) + "), no signal sent\n"
                                      : "dumped by: atraced's hang watch, no signal sent\nhang: " + hang + "\n" +
                                            kHangDumpNoDevices;
  return "atraced: process " + std::to_string(pid) + " (" + holder.program + ") dumped from outside; it runs on\n" + by +
         "stacks: " + std::to_string(facts.stacks_read) + " of " + std::to_string(facts.thread_count) +
         " threads read, one at a time, " + std::to_string(facts.stacks_written) +
         " written below; the longest a thread was held stopped: " + std::to_string(facts.max_stop_us) + " us\n" +
         ProcessLines(holder) +
         "written: " + HumanTime(written) + "\n" +
         RingsLine(rings, ring_names) + CannSections(pid, kDumpSignalNumber, pid, facts);
}

}  // namespace atraced
