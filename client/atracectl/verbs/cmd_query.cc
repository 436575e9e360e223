// atracectl status, list and du: queries, formatted by format.h (vacuum: cmd_vacuum.cc).
#include <algorithm>
#include <ctime>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "daemon_talk/connect.h"
#include "verbs/verbs.h"
#include "common/format.h"
#include "files/dir_origin.h"
#include "daemon_talk/list_columns.h"
#include "daemon_talk/list_filter.h"
#include "files/readers.h"
#include "daemon_talk/list_follow.h"
#include "daemon_talk/prometheus.h"

namespace po = boost::program_options;

namespace atracectl {

namespace {

// Disk use per class in one of the two figures: allocated (what fills the disk, and what
// the budget counts) or apparent (file lengths; a sparse file makes them differ).
struct ClassTotals {
  uint64_t host = 0, device = 0, exit = 0;
  uint64_t total() const { return host + device + exit; }
  void Add(const atrace::ListEntry& e, uint64_t bytes) {
    auto cls = ClassName(e.kind, e.side);
    (cls == "exit" ? exit : cls == "device" ? device : host) += bytes;
  }
};

struct Usage {
  ClassTotals allocated, apparent;
  explicit Usage(const std::vector<atrace::ListEntry>& entries) {
    for (const auto& e : entries) {
      allocated.Add(e, e.bytes);
      apparent.Add(e, e.apparent_bytes);
    }
  }
};

std::string JsonClass(uint32_t dirs, const std::string& limit, uint64_t bytes, uint64_t apparent) {
  return "{\"dirs\":" + std::to_string(dirs) + ",\"limit\":" + limit + ",\"bytes\":" + std::to_string(bytes) +
         ",\"apparent_bytes\":" + std::to_string(apparent) + "}";
}

// du's options: --json.
std::optional<po::variables_map> ParseJsonOnly(const Args& args, const std::string& usage, int* exit_code) {
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "machine-readable output (see docs/CLIENT.md)");
  return ParseCommand(args, usage, options, po::positional_options_description(), exit_code);
}

uint64_t NowUs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

uint64_t AgeSeconds(const atrace::ListEntry& e, uint64_t now_us) {
  return now_us > e.created_unix_us ? (now_us - e.created_unix_us) / 1000000u : 0;
}

}  // namespace

// The shared pools as a JSON array: [{"pool":..,"held":..,"limit":..,"uid_share":..,
// "uids":[{"uid":..,"held":..}]}], each pool's largest holders first.
std::string JsonShares(const std::vector<atrace::Share>& shares) {
  std::string out = "[";
  bool open = false;
  for (const atrace::Share& sh : shares) {
    if (sh.uid == ATRACE_SHARE_TOTAL) {
      out += std::string(open ? "]}," : "") + "{\"pool\":" + JsonString(sh.pool) + ",\"held\":" +
             std::to_string(sh.held) + ",\"limit\":" + std::to_string(sh.limit) +
             ",\"uid_share\":" + std::to_string(sh.uid_share) + ",\"uids\":[";
      open = true;
    } else if (open) {
      out += std::string(out.back() == '[' ? "" : ",") + "{\"uid\":" + std::to_string(sh.uid) +
             ",\"held\":" + std::to_string(sh.held) + "}";
    }
  }
  return out + (open ? "]}]" : "]");
}

// The shared pools for people: one line per pool, its largest holders on it.
std::string TextShares(const std::vector<atrace::Share>& shares) {
  std::string out;
  bool first_uid = true;
  bool bytes = false;
  auto amount = [&bytes](uint64_t v) { return bytes ? HumanBytes(v) : std::to_string(v); };
  for (const atrace::Share& sh : shares) {
    if (sh.uid == ATRACE_SHARE_TOTAL) {
      bytes = sh.pool == "ring_memory" || sh.pool == "queued_saves";
      std::string label = "shared " + sh.pool + ":";
      label.resize(std::max<size_t>(label.size() + 1, 21), ' ');
      out += (out.empty() ? "" : "\n") + label + amount(sh.held) + " / " + amount(sh.limit) + " held, at most " +
             amount(sh.uid_share) + " per uid";
      first_uid = true;
    } else {
      out += (first_uid ? ": " : ", ") + std::string("uid ") + std::to_string(sh.uid) + " " + amount(sh.held);
      first_uid = false;
    }
  }
  return out.empty() ? out : out + "\n";
}

// Each device whose traces came through the daemon (issue 24).
std::string JsonDevices(const std::vector<atrace_device_stat>& devices) {
  std::string out = "[";
  for (const atrace_device_stat& d : devices) {
    if (out.size() > 1) out += ",";
    out += "{\"device\":" + std::to_string(d.device_id) + ",\"events\":" + std::to_string(d.events) +
           ",\"received\":" + std::to_string(d.received) + ",\"saved\":" + std::to_string(d.saved) +
           ",\"dropped\":{\"invalid\":" + std::to_string(d.dropped_invalid) +
           ",\"daemon\":" + std::to_string(d.dropped_daemon) + "},\"reconnects\":" + std::to_string(d.reconnects) +
           "}";
  }
  return out + "]";
}

std::string TextDevices(const std::vector<atrace_device_stat>& devices) {
  std::string out;
  for (const atrace_device_stat& d : devices) {
    std::string label = "device " + std::to_string(d.device_id) + ":";
    label.resize(19, ' ');  // the column of the lines above
    out += label + std::to_string(d.events) + " events; received " + std::to_string(d.received) + ", saved " +
           std::to_string(d.saved) + ", dropped " + std::to_string(d.dropped_invalid) + " invalid + " +
           std::to_string(d.dropped_daemon) + " daemon, reconnects " + std::to_string(d.reconnects) + "\n";
  }
  return out;
}

namespace {

enum class StatusFormat { kText, kJson, kPrometheus };

std::optional<StatusFormat> ParseStatusOptions(const Args& args, int* exit_code) {
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "machine-readable output (see docs/CLIENT.md)")(
      "prometheus", po::bool_switch(),
      "Prometheus text exposition format, for node_exporter's textfile collector (see docs/CLIENT.md)");
  auto vm = ParseCommand(args, "Usage: atracectl [--socket PATH] status [--json | --prometheus]", options,
                         po::positional_options_description(), exit_code);
  if (!vm) return std::nullopt;
  const bool json = (*vm)["json"].as<bool>(), prometheus = (*vm)["prometheus"].as<bool>();
  if (json && prometheus) {
    std::cerr << "atracectl status: --json and --prometheus exclude each other\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  return json ? StatusFormat::kJson : prometheus ? StatusFormat::kPrometheus : StatusFormat::kText;
}

// What status shows: the daemon's figures, its shared pools and devices (empty from a daemon
// that has none to say), and the directories whose disk use it sums.
struct StatusFacts {
  atrace_status s{};
  std::vector<atrace::Share> shares;
  std::vector<atrace_device_stat> devices;
  std::vector<atrace::ListEntry> entries;  // not asked for --prometheus
};

// kExitOk, or the exit code after saying why.
int AskStatus(const Globals& g, bool with_entries, StatusFacts* f) {
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  if (auto ec = client.Status(&f->s)) return Fail(client, "status", ec);
  if (auto ec = client.Shares(&f->shares); ec && ec != std::errc::not_supported) return Fail(client, "status", ec);
  if (auto ec = client.Devices(&f->devices); ec && ec != std::errc::not_supported) return Fail(client, "status", ec);
  if (!with_entries) return kExitOk;
  if (auto ec = client.List(&f->entries)) return Fail(client, "list", ec);
  return kExitOk;
}

// The exit bound comes with the retention block; a daemon without it leaves it unknown.
std::string ExitLimit(const atrace_status& s) {
  return s.retention_known ? std::to_string(s.exit_record_num) : "null";
}

void PrintStatusJson(const StatusFacts& f) {
  const atrace_status& s = f.s;
  const Usage use(f.entries);
  const ClassTotals& bytes = use.allocated;
  const ClassTotals& apparent = use.apparent;
  const std::string limit = std::to_string(s.record_num);
  std::cout << "{\"root\":" << JsonString(s.root) << ",\"record_num\":" << s.record_num << ",\"classes\":{"
            << "\"host\":" << JsonClass(s.host_dirs, limit, bytes.host, apparent.host)
            << ",\"device\":" << JsonClass(s.device_dirs, limit, bytes.device, apparent.device)
            << ",\"exit\":" << JsonClass(s.exit_dirs, ExitLimit(s), bytes.exit, apparent.exit) << "}"
            << ",\"bytes_used\":" << bytes.total() << ",\"bytes_apparent\":" << apparent.total()
            << ",\"clients\":" << s.clients << ",\"counters\":{"
            << "\"events_begun\":" << s.events_begun << ",\"dirs_aged\":" << s.dirs_aged
            << ",\"bytes_written\":" << s.bytes_written << ",\"bytes_written_apparent\":" << s.bytes_apparent
            << ",\"removal_failures\":" << s.removal_failures
            << ",\"requests_refused\":" << s.requests_refused << "}";
  if (s.retention_known) {
    std::cout << ",\"retention\":{\"max_use\":" << s.max_use << ",\"keep_free\":" << s.keep_free
              << ",\"fs_free\":" << s.fs_free << ",\"aging_policy\":\"" << (s.aging_policy ? "fair" : "fifo")
              << "\",\"max_age_s\":" << s.max_age_s << ",\"exit_record_num\":" << s.exit_record_num
              << ",\"used\":{\"host\":" << s.used_host << ",\"device\":" << s.used_device
              << ",\"exit\":" << s.used_exit << "},\"bytes_freed\":" << s.bytes_freed
              << ",\"aged\":{\"count\":" << s.aged_count << ",\"bytes\":" << s.aged_max_use
              << ",\"keep_free\":" << s.aged_keep_free << ",\"age\":" << s.aged_max_age
              << ",\"vacuum\":" << s.aged_vacuum << "},\"refused\":{\"max_use\":" << s.refused_max_use
              << ",\"keep_free\":" << s.refused_keep_free << ",\"rate_limit\":" << s.refused_rate_limit
              << ",\"max_bytes_per_client\":" << s.refused_client_bytes << "}}";
  }
  // What dump-keep spares now and what the byte limits took before an export; null from a
  // daemon that does not say.
  std::cout << ",\"dumps\":";
  if (s.dumps_known) {
    std::cout << "{\"kept\":" << s.dumps_kept << ",\"aged_early\":" << s.dumps_aged_early << "}";
  } else {
    std::cout << "null";
  }
  if (!f.shares.empty()) std::cout << ",\"shares\":" << JsonShares(f.shares);
  std::cout << ",\"devices\":" << JsonDevices(f.devices) << ",\"incomplete_dirs\":"
            << (s.incomplete_known ? std::to_string(s.incomplete_dirs) : std::string("null")) << "}\n";
}

void PrintStatusText(const StatusFacts& f) {
  const atrace_status& s = f.s;
  const Usage use(f.entries);
  const ClassTotals& bytes = use.allocated;
  const ClassTotals& apparent = use.apparent;
  std::cout << "root:              " << s.root << "\n"
            << "record number:     " << s.record_num << " per class\n"
            << "host dirs:         " << s.host_dirs << " / " << s.record_num << "\n"
            << "device dirs:       " << s.device_dirs << " / " << s.record_num << "\n"
            << "exit dirs:         " << s.exit_dirs
            << (s.retention_known ? " / " + ExitLimit(s) : std::string(" (bounded by the daemon's exit-record-num)")) << "\n"
            << "bytes used:        " << bytes.total() << " (" << HumanBytes(bytes.total()) << ") on disk\n"
            << "bytes apparent:    " << apparent.total() << " (" << HumanBytes(apparent.total()) << ") by length\n"
            << "clients:           " << s.clients << "\n"
            << "events begun:      " << s.events_begun << "\n"
            << "dirs aged:         " << s.dirs_aged << "\n"
            << "bytes written:     " << s.bytes_written << " on disk, " << s.bytes_apparent << " by length\n"
            << "removal failures:  " << s.removal_failures << "\n"
            << "requests refused:  " << s.requests_refused << "\n";
  // Saves a crash or a stop cut short (`list` marks them); unknown from an older daemon.
  if (s.incomplete_known) std::cout << "incomplete dirs:   " << s.incomplete_dirs << "\n";
  // dump-keep: dumps spared from record-num until exported, and those the byte limits took first.
  if (s.dumps_known) {
    std::cout << "dumps kept:        " << s.dumps_kept << " (aged early by the byte limits: " << s.dumps_aged_early
              << ")\n";
  }
  if (s.retention_known) {
    std::cout << "max-use:           " << s.max_use << " (" << HumanBytes(s.max_use) << "), "
              << s.used_host + s.used_device + s.used_exit << " used\n"
              << "keep-free:         " << s.keep_free << " (" << HumanBytes(s.keep_free) << "), " << s.fs_free
              << " (" << HumanBytes(s.fs_free) << ") free\n"
              << "aging policy:      " << (s.aging_policy ? "fair" : "fifo") << ", max-age "
              << (s.max_age_s ? std::to_string(s.max_age_s) + " s" : std::string("off")) << "\n"
              << "aged by reason:    count " << s.aged_count << ", bytes " << s.aged_max_use << ", keep-free "
              << s.aged_keep_free << ", age " << s.aged_max_age << ", vacuum " << s.aged_vacuum << "; "
              << s.bytes_freed << " bytes freed\n"
              << "refused by limit:  max-use " << s.refused_max_use << ", keep-free " << s.refused_keep_free
              << ", rate-limit " << s.refused_rate_limit << ", max-bytes-per-client " << s.refused_client_bytes
              << "\n";
  }
  if (!f.shares.empty()) std::cout << TextShares(f.shares);
  std::cout << TextDevices(f.devices);
}

}  // namespace

int RunStatus(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  const std::optional<StatusFormat> format = ParseStatusOptions(args, &exit_code);
  if (!format) return exit_code;
  StatusFacts facts;
  if (int asked = AskStatus(g, *format != StatusFormat::kPrometheus, &facts); asked != kExitOk) return asked;
  switch (*format) {
    case StatusFormat::kPrometheus:
      std::cout << PrometheusText(facts.s, facts.shares, facts.devices);
      break;
    case StatusFormat::kJson:
      PrintStatusJson(facts);
      break;
    case StatusFormat::kText:
      PrintStatusText(facts);
      break;
  }
  return kExitOk;
}

namespace {

std::string JsonEntry(const atrace::ListEntry& e, uint64_t now, const std::string& trace_dir) {
  std::ostringstream o;
  const DirOrigin origin = OriginOf(e, trace_dir + "/" + e.path);
  o << "{\"seq\":" << e.seq << ",\"class\":" << JsonString(ClassName(e.kind, e.side))
    << ",\"kind\":" << JsonString(KindName(e.kind)) << ",\"device_id\":" << e.device_id << ",\"pid\":" << e.pid
    << ",\"uid\":" << e.uid << ",\"comm\":" << (e.comm.empty() ? std::string("null") : JsonString(e.comm))
    << ",\"bytes\":" << e.bytes << ",\"apparent_bytes\":" << e.apparent_bytes
    << ",\"created_unix_us\":" << e.created_unix_us << ",\"age_s\":" << AgeSeconds(e, now)
    << ",\"how\":" << JsonString(origin.Label())
    << ",\"signal\":" << (origin.signo ? std::to_string(origin.signo) : std::string("null"))
    << ",\"path\":" << JsonString(e.path)
    << ",\"incomplete\":" << ((e.flags & ATRACE_LIST_INCOMPLETE) ? "true" : "false")
    << ",\"job\":" << (e.job.empty() ? std::string("null") : JsonString(e.job))
    << ",\"rank\":" << (e.rank.empty() ? std::string("null") : e.rank)
    << ",\"world_size\":" << (e.world_size.empty() ? std::string("null") : e.world_size) << "}";
  return o.str();
}

// SIZE is the disk used; APPARENT the files' length, which only a sparse file makes larger.
// DEVICE is the device id of a device-side directory, "-" for the host's. COMM is the program
// the directory was made for, "-" where the daemon did not record it (an older root). HOW and
// TIME are list_columns.h's. STATE is "incomplete" for a directory holding a save that was cut
// short, else "-". JOB and RANK are the labels the process sent (its environment's job and
// rank), "-" where it sent none; they come after STATE so that the columns before keep their
// places.
constexpr const char* kListHeader =
    "SEQ\tCLASS\tKIND\tDEVICE\tPID\tUID\tCOMM\tHOW\tSIZE\tAPPARENT\tTIME\tAGE\tPATH\tSTATE\tJOB\tRANK\n";

std::string TextEntry(const atrace::ListEntry& e, uint64_t now, const std::string& trace_dir) {
  std::ostringstream o;
  o << e.seq << "\t" << ClassName(e.kind, e.side) << "\t" << KindName(e.kind) << "\t"
    << (e.side == ATRACE_SIDE_DEVICE ? std::to_string(e.device_id) : std::string("-")) << "\t" << e.pid << "\t"
    << e.uid << "\t" << (e.comm.empty() ? std::string("-") : e.comm) << "\t" << HowColumn(e, trace_dir) << "\t"
    << HumanBytes(e.bytes) << "\t" << HumanBytes(e.apparent_bytes) << "\t" << LocalTimeColumn(e.created_unix_us) << "\t"
    << HumanAge(AgeSeconds(e, now)) << "\t" << e.path << "\t"
    << ((e.flags & ATRACE_LIST_INCOMPLETE) ? "incomplete" : "-") << "\t"
    << (e.job.empty() ? std::string("-") : TerminalLine(e.job)) << "\t"
    << (e.rank.empty() ? std::string("-") : TerminalLine(e.rank)) << "\n";
  return o.str();
}

}  // namespace

int RunList(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "machine-readable output (see docs/CLIENT.md)")(
      "follow,f", po::bool_switch(), "then print each new directory as it is made, until interrupted")(
      "live", po::bool_switch(),
      "the live processes the daemon holds rings for instead: labels, last record time and stall state (with --job, --json)");
  AddFilterOptions(options);
  auto vm = ParseCommand(args,
                         "Usage: atracectl [--socket PATH] list [--pid N] [--uid N] [--comm NAME] [--job J] [--rank R] [--kind KIND] [--side SIDE] "
                         "[--device N] [--since TIME] [--until TIME] [--follow] [--json]\n"
                         "       atracectl [--socket PATH] list --live [--job J] [--json]",
                         options, po::positional_options_description(), &exit_code);
  if (!vm) return exit_code;
  if ((*vm)["live"].as<bool>()) return RunListLive(g, *vm);
  const uint64_t now = NowUs();
  ListFilter filter;
  if (!ReadFilter(*vm, static_cast<int64_t>(now), &filter, &exit_code)) return exit_code;
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  std::vector<atrace::ListEntry> all, entries;
  if (auto ec = client.List(&all)) return Fail(client, "list", ec);
  uint64_t last_seq = 0;
  for (auto& e : all) {
    last_seq = std::max(last_seq, e.seq);
    if (filter.Matches(e)) entries.push_back(std::move(e));
  }
  atrace_status status{};
  if (auto ec = client.Status(&status)) return Fail(client, "status", ec);
  const std::string trace_dir = std::string(status.root) + "/atrace";
  const Readers readers = Readers::Of(trace_dir);
  readers.KeepReadable("list", &entries);
  const bool json = (*vm)["json"].as<bool>();
  const bool follow = (*vm)["follow"].as<bool>();
  if (json && !follow) {
    std::cout << "{\"entries\":[";
    for (size_t i = 0; i < entries.size(); ++i) std::cout << (i ? "," : "") << JsonEntry(entries[i], now, trace_dir);
    std::cout << "]}\n";
    return kExitOk;
  }
  // Following, JSON is one object per line (what a pipe reads as it comes).
  if (!json) std::cout << kListHeader;
  for (const auto& e : entries) std::cout << (json ? JsonEntry(e, now, trace_dir) + "\n" : TextEntry(e, now, trace_dir));
  if (!follow) return kExitOk;
  std::cout.flush();
  return Follow(client, [&g] { return Connect(g); }, trace_dir, last_seq, [&](const atrace::ListEntry& e) {
    if (!filter.Matches(e) || !readers.Reads(e.uid)) return;
    const uint64_t at = NowUs();
    std::cout << (json ? JsonEntry(e, at, trace_dir) + "\n" : TextEntry(e, at, trace_dir)) << std::flush;
  });
}

int RunDu(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  auto vm = ParseJsonOnly(args, "Usage: atracectl [--socket PATH] du [--json]", &exit_code);
  if (!vm) return exit_code;
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  std::vector<atrace::ListEntry> entries;
  if (auto ec = client.List(&entries)) return Fail(client, "list", ec);
  atrace_status status{};
  if (auto ec = client.Status(&status)) return Fail(client, "status", ec);
  Readers::Of(std::string(status.root) + "/atrace").KeepReadable("du", &entries);
  const Usage use(entries);
  const ClassTotals& bytes = use.allocated;
  const ClassTotals& apparent = use.apparent;
  if ((*vm)["json"].as<bool>()) {
    std::cout << "{\"host\":" << bytes.host << ",\"device\":" << bytes.device << ",\"exit\":" << bytes.exit
              << ",\"total\":" << bytes.total() << ",\"apparent\":{\"host\":" << apparent.host
              << ",\"device\":" << apparent.device << ",\"exit\":" << apparent.exit
              << ",\"total\":" << apparent.total() << "}}\n";
    return kExitOk;
  }
  // Like du(1): the disk used first; the apparent size (du --apparent-size) as a third column,
  // so scripts reading the first two keep working.
  std::cout << bytes.host << "\thost\t" << apparent.host << "\n"
            << bytes.device << "\tdevice\t" << apparent.device << "\n"
            << bytes.exit << "\texit\t" << apparent.exit << "\n"
            << bytes.total() << "\ttotal\t" << apparent.total() << "\n";
  return kExitOk;
}

}  // namespace atracectl
