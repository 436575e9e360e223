// atracectl list --live [--job J] [--json]: the live processes the daemon holds rings for, with
// their labels, last record time and stall state (daemon_talk/live_processes.h). RunList
// hands over when --live is given.
#include <iostream>
#include <string>

#include "atraced/proto/codec.h"
#include "common/command_line.h"
#include "common/escape.h"
#include "daemon_talk/connect.h"
#include "daemon_talk/live_processes.h"
#include "verbs/verbs.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

// The options that choose directories, which a live listing has none of.
constexpr const char* kDirectoryOptions[] = {"pid", "uid", "comm", "rank", "kind", "side", "device", "since", "until"};

// "" when the command line fits a live listing, else the usage error.
std::string CheckLiveOptions(const po::variables_map& vm) {
  for (const char* name : kDirectoryOptions) {
    if (vm.count(name)) return std::string("list --live: --") + name + " chooses directories; with --live only --job and --json apply";
  }
  if (vm["follow"].as<bool>()) return "list --live: --follow follows new directories; run list --live again to watch processes";
  if (vm.count("job")) {
    if (std::string why = atraced::proto::CheckLabel(atraced::proto::LabelKind::kJob, vm["job"].as<std::string>());
        !why.empty()) {
      return "list --live: --job: " + why;
    }
  }
  return "";
}

}  // namespace

int RunListLive(const Globals& g, const po::variables_map& vm) {
  if (std::string why = CheckLiveOptions(vm); !why.empty()) return UsageError(why);
  atrace::Client::Options options;
  options.flags = ATRACE_OPT_LIST_LIVE;
  atrace::Client client = Connect(g, options);
  if (!client) return kExitFailed;
  LiveListing listing;
  const std::string job = vm.count("job") ? vm["job"].as<std::string>() : "";
  if (atraced::Status st = FetchLive(client, job, &listing); !st.ok()) {
    std::cerr << "atracectl: list --live: " << st.message() << "\n";
    return kExitFailed;
  }
  std::cout << (vm["json"].as<bool>() ? LiveJson(listing) : LiveText(listing));
  if (listing.omitted > 0) {
    std::cerr << "atracectl: list --live: " << listing.omitted
              << " more process(es) past the daemon's bound were not listed; narrow with --job\n";
  }
  return kExitOk;
}

}  // namespace atracectl
