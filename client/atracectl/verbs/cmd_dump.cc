// atracectl dump PID... | --all | --comm NAME | --uid UID [--json] [--devices]: a hung
// process's last records and every thread's stack, saved by the daemon from outside it
// (PROCESS_DUMP): one schedule directory per process, its path printed on a line of its own.
// --devices adds the health of the NPUs they use, read here as the operator (host/device_health.h).
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "atraced/proto/codec.h"
#include "atraced/proto/wire.h"
#include "common/command_line.h"
#include "daemon_talk/connect.h"
#include "verbs/verbs.h"
#include "common/escape.h"
#include "common/format.h"
#include "host/device_health.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

constexpr const char* kUsage =
    "Usage: atracectl [--socket PATH] dump PID... | [--all] [--comm NAME] [--uid UID] [--job J] [--json] [--devices]\n"
    "Saves each live process's records (its rings, as RING_SAVE_ALL does) and every thread's stack, read from\n"
    "outside one thread at a time while it runs on, into one schedule directory; prints each directory's path.\n"
    "--all: every process whose rings the daemon holds; --comm, --uid and --job narrow it (and imply it); they combine.\n"
    "--devices: then each dumped process's NPU and rank (from its environment), npu-smi info and each device's\n"
    "hccn_tool link state (run from PATH, where installed), after the paths (with --json: \"devices\").\n"
    "Root may dump any process, anyone else their own.";

// Long enough for the daemon's unwind deadline (crash-unwind-timeout-ms, 2 s) for each of
// the most processes one request dumps (128), one after another.
constexpr int kDumpTimeoutMs = 10 * 60 * 1000;

bool ParsePid(const std::string& text, int32_t* pid) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v <= 0 || v > 0x3fffffff) return false;
  *pid = static_cast<int32_t>(v);
  return true;
}

void PrintJson(const std::vector<atrace::Client::DumpEntry>& entries, uint32_t omitted, const DeviceHealth* devices) {
  std::cout << "{\"dumps\":[";
  bool first = true;
  for (const auto& e : entries) {
    if (e.status != 0) continue;
    std::cout << (first ? "" : ",") << "{\"pid\":" << e.pid << ",\"path\":" << JsonString(e.text)
              << ",\"threads\":" << e.threads << ",\"rings\":" << e.rings << ",\"max_stop_us\":" << e.max_stop_us
              << "}";
    first = false;
  }
  std::cout << "],\"refused\":[";
  first = true;
  for (const auto& e : entries) {
    if (e.status == 0) continue;
    std::cout << (first ? "" : ",") << "{\"pid\":" << e.pid << ",\"error\":" << JsonString(atrace_client_strerror(e.status))
              << ",\"errno\":" << -e.status << ",\"message\":" << JsonString(e.text) << "}";
    first = false;
  }
  std::cout << "],\"omitted\":" << omitted;
  if (devices != nullptr) std::cout << ",\"devices\":" << DeviceHealthJson(*devices);
  std::cout << "}\n";
}

// The NPUs' health for the processes dumped (not those refused).
DeviceHealth HealthOfDumped(const std::vector<atrace::Client::DumpEntry>& entries) {
  std::vector<pid_t> dumped;
  for (const auto& e : entries) {
    if (e.status == 0) dumped.push_back(e.pid);
  }
  return ReadDeviceHealth(dumped);
}

struct DumpOptions {
  std::vector<int32_t> pids;  // or a selection:
  uint32_t select = 0;        // ATRACE_DUMP_*
  std::string comm, job;
  uint32_t uid = 0;
  bool json = false;
  bool devices = false;  // the dumped processes' NPUs too

  // The request, pointing into these options.
  atrace_dump_spec Spec() const {
    atrace_dump_spec spec{};
    spec.select = select;
    if (select & ATRACE_DUMP_COMM) spec.comm = comm.c_str();
    if (select & ATRACE_DUMP_UID) spec.uid = uid;
    if (select & ATRACE_DUMP_JOB) spec.job = job.c_str();
    spec.pids = pids.data();
    spec.pid_count = pids.size();
    return spec;
  }
};

std::optional<DumpOptions> ParseOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "one JSON object: the dumps and the refusals")(
      "all", po::bool_switch(), "every process whose rings the daemon holds (that you may dump)")(
      "comm", po::value<std::string>(), "the processes named NAME (their comm, as 'atracectl list' shows it)")(
      "uid", po::value<std::string>(), "the processes of uid UID")(
      "job", po::value<std::string>(), "the processes labelled with job J (ATRACE_JOB, SLURM_JOB_ID, JOB_ID)")(
      "devices", po::bool_switch(), "the health of the dumped processes' NPUs (npu-smi, hccn_tool)")(
      "pid", po::value<std::vector<std::string>>(), "a process (the command's arguments)");
  po::positional_options_description positional;
  positional.add("pid", -1);
  auto vm = ParseCommand(args, kUsage, options, positional, exit_code);
  if (!vm) return std::nullopt;
  auto usage = [exit_code](const std::string& message) {
    *exit_code = UsageError(message);
    return std::nullopt;
  };
  DumpOptions o;
  o.json = (*vm)["json"].as<bool>();
  o.devices = (*vm)["devices"].as<bool>();
  if (vm->count("pid")) {
    for (const auto& text : (*vm)["pid"].as<std::vector<std::string>>()) {
      int32_t pid = 0;
      if (!ParsePid(text, &pid)) return usage("dump: '" + TerminalLine(text) + "' is not a process id");
      o.pids.push_back(pid);
    }
  }
  if ((*vm)["all"].as<bool>()) o.select |= ATRACE_DUMP_ALL;
  if (vm->count("comm")) {
    o.comm = (*vm)["comm"].as<std::string>();
    if (o.comm.empty()) return usage("dump: --comm needs a name");
    o.select |= ATRACE_DUMP_COMM;
  }
  if (vm->count("uid")) {
    const std::string text = (*vm)["uid"].as<std::string>();
    int32_t uid = 0;
    if (text != "0" && !ParsePid(text, &uid)) return usage("dump: --uid '" + TerminalLine(text) + "' is not a uid");
    o.select |= ATRACE_DUMP_UID;
    o.uid = static_cast<uint32_t>(uid);
  }
  if (vm->count("job")) {
    o.job = (*vm)["job"].as<std::string>();
    const std::string why = atraced::proto::CheckLabel(atraced::proto::LabelKind::kJob, o.job);
    if (o.job.empty() || !why.empty()) return usage("dump: --job '" + TerminalLine(o.job) + "': " + (why.empty() ? "empty" : why));
    o.select |= ATRACE_DUMP_JOB;
  }
  if (o.pids.empty() && o.select == 0) return usage("dump: give the PIDs to dump, or --all, --comm NAME, --uid UID or --job J");
  if (!o.pids.empty() && o.select != 0) return usage("dump: give PIDs or --all/--comm/--uid/--job, not both");
  if (o.pids.size() > ATR_MAX_DUMP_PROCESSES) {
    return usage("dump: at most " + std::to_string(ATR_MAX_DUMP_PROCESSES) + " PIDs at once");
  }
  return o;
}

// PROCESS_DUMP, on a connection that waits as long as the daemon may take; kExitOk, or the
// exit code after saying why.
int AskDump(const Globals& g, const DumpOptions& o, std::vector<atrace::Client::DumpEntry>* entries, uint32_t* omitted) {
  atrace::Client::Options options;
  options.io_timeout_ms = kDumpTimeoutMs;
  options.flags = ATRACE_OPT_PROCESS_DUMP;
  atrace::Client client = Connect(g, options);
  if (!client) return kExitFailed;
  if (auto ec = client.DumpProcesses(o.Spec(), entries, omitted)) {
    if (ec == std::errc::not_supported || ec == std::errc::function_not_supported) {
      std::cerr << "atracectl: dump: this daemon is older than dump (it does not offer PROCESS_DUMP)\n";
      return kExitFailed;
    }
    return Fail(client, "dump", ec);
  }
  return kExitOk;
}

// Standard error: each refusal, and why nothing or not everything was dumped; the exit code.
int SayWhatFailed(const DumpOptions& o, const std::vector<atrace::Client::DumpEntry>& entries, uint32_t omitted) {
  bool failed = false;
  for (const auto& e : entries) {
    if (e.status == 0) continue;
    failed = true;
    std::cerr << "atracectl: dump: " << TerminalLine(e.text) << " (" << atrace_client_strerror(e.status) << ")\n";
  }
  if (entries.empty()) {
    std::cerr << "atracectl: dump: no process " << (o.select & ATRACE_DUMP_COMM ? "named " + TerminalLine(o.comm) + " " : "")
              << (o.select & ATRACE_DUMP_UID ? "of uid " + std::to_string(o.uid) + " " : "")
              << (o.select & ATRACE_DUMP_JOB ? "of job " + TerminalLine(o.job) + " " : "")
              << "holds rings here that you may dump ('atracectl status' counts the clients; a process shows here once "
                 "it created a tracer)\n";
    return kExitFailed;
  }
  if (omitted > 0) {
    std::cerr << "atracectl: dump: " << omitted << " more matched; the daemon dumps at most "
              << ATR_MAX_DUMP_PROCESSES << " at once: narrow the selection\n";
  }
  return failed ? kExitFailed : kExitOk;
}

}  // namespace

int RunDump(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  const std::optional<DumpOptions> o = ParseOptions(args, &exit_code);
  if (!o) return exit_code;
  std::vector<atrace::Client::DumpEntry> entries;
  uint32_t omitted = 0;
  if (int asked = AskDump(g, *o, &entries, &omitted); asked != kExitOk) return asked;
  std::optional<DeviceHealth> devices;
  if (o->devices) devices = HealthOfDumped(entries);
  if (o->json) {
    PrintJson(entries, omitted, devices ? &*devices : nullptr);
  } else {
    for (const auto& e : entries) {
      if (e.status == 0) std::cout << e.text << "\n";
    }
    if (devices) std::cout << "\n" << DeviceHealthText(*devices);
  }
  return SayWhatFailed(*o, entries, omitted);
}

}  // namespace atracectl
