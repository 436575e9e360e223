// atracectl vacuum: the configured limits now (VACUUM), or journalctl's verbs once
// (VACUUM_BY): --older-than SPAN, --max-use SIZE, --keep N, each with --dry-run.
#include <iostream>
#include <limits>

#include "common/command_line.h"
#include "daemon_talk/connect.h"
#include "verbs/verbs.h"
#include "common/format.h"
#include "daemon_talk/list_filter.h"

namespace po = boost::program_options;

namespace atracectl {
namespace {

constexpr const char* kUsage =
    "Usage: atracectl [--socket PATH] vacuum [--older-than SPAN] [--max-use SIZE] [--keep N] [--dry-run] [--json]\n"
    "Without a verb: apply the daemon's configured limits now. With verbs (any combination; a directory goes if\n"
    "any says so; directories being written never): --older-than removes every class, exit included;\n"
    "--max-use removes the oldest, exit last; --keep counts host and device each, never exit.\n"
    "Without --dry-run the verbs need root or the daemon's user.";

// The verbs from the command line; false after printing a usage error.
bool ReadVerbs(const po::variables_map& vm, atrace_vacuum_spec* spec, int* exit_code) {
  auto bad = [exit_code](const std::string& why) {
    *exit_code = UsageError(why);
    return false;
  };
  if (vm.count("older-than")) {
    const std::string text = vm["older-than"].as<std::string>();
    const auto span = ParseSpan(text);
    if (!span) {
      return bad("--older-than '" + text + "' is not a span: use a number and a unit, as '2h', '1d', '30min', "
                 "'1h 30min' (us, ms, s, min, h, d, w, M, y)");
    }
    if (*span <= 0) return bad("--older-than '" + text + "' is no time at all: give a span longer than 0");
    spec->verbs |= ATRACE_VACUUM_OLDER_THAN;
    spec->older_than_us = static_cast<uint64_t>(*span);
  }
  if (vm.count("max-use")) {
    const std::string text = vm["max-use"].as<std::string>();
    const auto size = ParseSize(text);
    if (!size) return bad("--max-use '" + text + "' is not a size: use bytes or K, M, G, T (1024s), as '500M', '2G'");
    spec->verbs |= ATRACE_VACUUM_MAX_USE;
    spec->max_use = *size;
  }
  if (vm.count("keep")) {
    const std::string text = vm["keep"].as<std::string>();
    const auto n = ParseSize(text);  // digits only: a suffix is refused below
    if (!n || text.find_first_not_of("0123456789") != std::string::npos || *n == 0 ||
        *n > std::numeric_limits<uint32_t>::max()) {
      return bad("--keep '" + text + "' is not a number of directories: give a whole number, 1 or more (to " +
                 "remove everything, use --max-use 0)");
    }
    spec->verbs |= ATRACE_VACUUM_KEEP;
    spec->keep = static_cast<uint32_t>(*n);
  }
  return true;
}

}  // namespace

int RunVacuum(const Globals& g, const Args& args) {
  int exit_code = kExitOk;
  po::options_description options("options");
  options.add_options()("json", po::bool_switch(), "machine-readable output (see docs/CLIENT.md)")(
      "dry-run", po::bool_switch(), "only report what would be removed")(
      "older-than", po::value<std::string>(), "remove directories made longer ago than SPAN ('2h', '1d', '30min')")(
      "max-use", po::value<std::string>(), "remove the oldest until the root holds at most SIZE ('500M', '2G')")(
      "keep", po::value<std::string>(), "keep the N newest host and the N newest device directories");
  auto vm = ParseCommand(args, kUsage, options, po::positional_options_description(), &exit_code);
  if (!vm) return exit_code;
  atrace_vacuum_spec spec{};
  spec.dry_run = (*vm)["dry-run"].as<bool>() ? 1 : 0;
  if (!ReadVerbs(*vm, &spec, &exit_code)) return exit_code;
  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  std::vector<std::string> removed;
  atrace_vacuum_result result{};
  if (spec.verbs == 0) {
    if (auto ec = client.Vacuum(spec.dry_run != 0, &removed)) return Fail(client, "vacuum", ec);
  } else if (auto ec = client.VacuumBy(spec, &removed, &result)) {
    if (ec == std::errc::function_not_supported) {
      std::cerr << "atracectl: vacuum: this daemon is older than --older-than, --max-use and --keep; it only "
                   "applies its configured limits ('atracectl vacuum' without them)\n";
      return kExitFailed;
    }
    return Fail(client, "vacuum", ec);
  }
  const bool verbs = spec.verbs != 0;
  const uint64_t total = removed.size() + result.omitted;
  if ((*vm)["json"].as<bool>()) {
    std::cout << "{\"dry_run\":" << (spec.dry_run ? "true" : "false") << ",\"removed\":[";
    for (size_t i = 0; i < removed.size(); ++i) std::cout << (i ? "," : "") << JsonString(removed[i]);
    std::cout << "]";
    if (verbs) std::cout << ",\"omitted\":" << result.omitted << ",\"bytes\":" << result.bytes;
    std::cout << "}\n";
    return kExitOk;
  }
  std::cout << (spec.dry_run ? "would remove " : "removed ") << total << (total == 1 ? " directory" : " directories");
  if (verbs) std::cout << " (" << HumanBytes(result.bytes) << ")";
  std::cout << (total == 0 ? "\n" : ":\n");
  for (const auto& p : removed) std::cout << "  " << p << "\n";
  if (result.omitted) std::cout << "  ... and " << result.omitted << " more\n";
  return kExitOk;
}

}  // namespace atracectl
