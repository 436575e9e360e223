// atracectl status, list, du and vacuum: queries, formatted by format.h.
#include <ctime>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "format.h"
#include "parse.h"

namespace po = boost::program_options;

namespace atracectl {

namespace {

struct ClassTotals {
  uint64_t host = 0, device = 0, exit = 0;
  uint64_t total() const { return host + device + exit; }
  void Add(const atrace::ListEntry& e) {
    auto cls = ClassName(e.kind, e.side);
    (cls == "exit" ? exit : cls == "device" ? device : host) += e.bytes;
  }
};

// The options shared by the query commands: --json only, or nothing.
std::optional<po::variables_map> ParseSimple(const Args& args, const std::string& usage, bool json, bool dry_run,
                                             int* exit_code) {
  po::options_description options("options");
  if (json) options.add_options()("json", po::bool_switch(), "machine-readable output (see docs/CLIENT.md)");
  if (dry_run) options.add_options()("dry-run", po::bool_switch(), "only report what would be removed");
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

int RunStatus(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  auto vm = ParseSimple(args, "Usage: atracectl [--socket PATH] status [--json]", true, false, &exit_code);
  if (!vm) return exit_code;
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  atrace_status s{};
  if (auto ec = client.Status(&s)) return Fail(client, "status", ec);
  std::vector<atrace::ListEntry> entries;
  if (auto ec = client.List(&entries)) return Fail(client, "list", ec);
  ClassTotals bytes;
  for (const auto& e : entries) bytes.Add(e);

  if ((*vm)["json"].as<bool>()) {
    std::cout << "{\"root\":" << JsonString(s.root) << ",\"record_num\":" << s.record_num
              << ",\"classes\":{"
              << "\"host\":{\"dirs\":" << s.host_dirs << ",\"limit\":" << s.record_num << ",\"bytes\":" << bytes.host
              << "},\"device\":{\"dirs\":" << s.device_dirs << ",\"limit\":" << s.record_num
              << ",\"bytes\":" << bytes.device << "},\"exit\":{\"dirs\":" << s.exit_dirs
              << ",\"limit\":null,\"bytes\":" << bytes.exit << "}}"
              << ",\"bytes_used\":" << bytes.total() << ",\"clients\":" << s.clients << ",\"counters\":{"
              << "\"events_begun\":" << s.events_begun << ",\"dirs_aged\":" << s.dirs_aged
              << ",\"bytes_written\":" << s.bytes_written << ",\"removal_failures\":" << s.removal_failures
              << ",\"requests_refused\":" << s.requests_refused << "}}\n";
    return kExitOk;
  }
  std::cout << "root:              " << s.root << "\n"
            << "record number:     " << s.record_num << " per class\n"
            << "host dirs:         " << s.host_dirs << " / " << s.record_num << "\n"
            << "device dirs:       " << s.device_dirs << " / " << s.record_num << "\n"
            << "exit dirs:         " << s.exit_dirs << " (bounded by the daemon's exit-record-num)\n"
            << "bytes used:        " << bytes.total() << " (" << HumanBytes(bytes.total()) << ")\n"
            << "clients:           " << s.clients << "\n"
            << "events begun:      " << s.events_begun << "\n"
            << "dirs aged:         " << s.dirs_aged << "\n"
            << "bytes written:     " << s.bytes_written << "\n"
            << "removal failures:  " << s.removal_failures << "\n"
            << "requests refused:  " << s.requests_refused << "\n";
  return kExitOk;
}

int RunList(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  auto vm = ParseSimple(args, "Usage: atracectl [--socket PATH] list [--json]", true, false, &exit_code);
  if (!vm) return exit_code;
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  std::vector<atrace::ListEntry> entries;
  if (auto ec = client.List(&entries)) return Fail(client, "list", ec);
  uint64_t now = NowUs();
  if ((*vm)["json"].as<bool>()) {
    std::cout << "{\"entries\":[";
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      std::cout << (i ? "," : "") << "{\"seq\":" << e.seq << ",\"class\":" << JsonString(ClassName(e.kind, e.side))
                << ",\"kind\":" << JsonString(KindName(e.kind)) << ",\"device_id\":" << e.device_id
                << ",\"pid\":" << e.pid << ",\"uid\":" << e.uid << ",\"bytes\":" << e.bytes
                << ",\"created_unix_us\":" << e.created_unix_us << ",\"age_s\":" << AgeSeconds(e, now)
                << ",\"path\":" << JsonString(e.path) << "}";
    }
    std::cout << "]}\n";
    return kExitOk;
  }
  std::cout << "SEQ\tCLASS\tKIND\tPID\tUID\tSIZE\tAGE\tPATH\n";
  for (const auto& e : entries) {
    std::cout << e.seq << "\t" << ClassName(e.kind, e.side) << "\t" << KindName(e.kind) << "\t" << e.pid << "\t"
              << e.uid << "\t" << HumanBytes(e.bytes) << "\t" << HumanAge(AgeSeconds(e, now)) << "\t" << e.path
              << "\n";
  }
  return kExitOk;
}

int RunDu(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  auto vm = ParseSimple(args, "Usage: atracectl [--socket PATH] du [--json]", true, false, &exit_code);
  if (!vm) return exit_code;
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  std::vector<atrace::ListEntry> entries;
  if (auto ec = client.List(&entries)) return Fail(client, "list", ec);
  ClassTotals bytes;
  for (const auto& e : entries) bytes.Add(e);
  if ((*vm)["json"].as<bool>()) {
    std::cout << "{\"host\":" << bytes.host << ",\"device\":" << bytes.device << ",\"exit\":" << bytes.exit
              << ",\"total\":" << bytes.total() << "}\n";
    return kExitOk;
  }
  std::cout << bytes.host << "\thost\n"
            << bytes.device << "\tdevice\n"
            << bytes.exit << "\texit\n"
            << bytes.total() << "\ttotal\n";
  return kExitOk;
}

int RunVacuum(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  auto vm = ParseSimple(args, "Usage: atracectl [--socket PATH] vacuum [--dry-run] [--json]", true, true,
                        &exit_code);
  if (!vm) return exit_code;
  bool dry_run = (*vm)["dry-run"].as<bool>();
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  std::vector<std::string> removed;
  if (auto ec = client.Vacuum(dry_run, &removed)) return Fail(client, "vacuum", ec);
  if ((*vm)["json"].as<bool>()) {
    std::cout << "{\"dry_run\":" << (dry_run ? "true" : "false") << ",\"removed\":[";
    for (size_t i = 0; i < removed.size(); ++i) std::cout << (i ? "," : "") << JsonString(removed[i]);
    std::cout << "]}\n";
    return kExitOk;
  }
  std::cout << (dry_run ? "would remove " : "removed ") << removed.size()
            << (removed.size() == 1 ? " directory" : " directories") << (removed.empty() ? "\n" : ":\n");
  for (const auto& p : removed) std::cout << "  " << p << "\n";
  return kExitOk;
}

}  // namespace atracectl
