#include "verbs/verbs.h"

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "atraced/base/nearest_name.h"
#include "atraced/base/option_error.h"
#include "common/escape.h"

namespace po = boost::program_options;

namespace atracectl {

namespace {

constexpr const char* kUsage =
    "Usage: atracectl [--socket PATH] COMMAND [ARGS]\n"
    "\n"
    "Commands:\n"
    "  emit     write one event with one file (content from FILE or stdin)\n"
    "  status   daemon root, limits, directory counts and counters\n"
    "  list     event directories with class, pid, uid, size and age\n"
    "  show     one event directory's files, .bin decoded as CANN's asys writes it\n"
    "  info     one process's events and what its crash or death reports say\n"
    "  dump     save live processes' records and every thread's stack, from outside them\n"
    "  export   the selected directories' records as a timeline (Trace Event Format)\n"
    "  merge    one timeline of the bundles of every host of a job, a group per rank\n"
    "  hang     which ranks of a hung job are stuck where, from their bundles\n"
    "  du       bytes per class and in total\n"
    "  vacuum   apply the aging limits now (--dry-run: only report)\n"
    "\n"
    "Run 'atracectl COMMAND --help' for a command's options.\n"
    "Exit codes: 0 success, 1 the daemon refused or failed, 2 usage error.\n";

using Runner = int (*)(const Globals&, const Args&);

const std::map<std::string, Runner>& Commands() {
  static const std::map<std::string, Runner> kCommands{
      {"emit", RunEmit},   {"status", RunStatus}, {"list", RunList},
      {"du", RunDu},       {"vacuum", RunVacuum}, {"show", RunShow},
      {"info", RunInfo},   {"export", RunExport}, {"dump", RunDump}, {"merge", RunMerge}, {"hang", RunHang}};
  return kCommands;
}

po::options_description GlobalOptions() {
  po::options_description global("Global options");
  global.add_options()("help,h", "show this help")("version", "print the version and the protocol it speaks")(
      "socket", po::value<std::string>(),
                                                   "daemon socket (default: $ATRACED_SOCKET, else the system "
                                                   "unit's socket, else the user unit's)");
  return global;
}

}  // namespace

int Main(int argc, char** argv) {
  // Split at the sub-command by hand, so "atracectl emit --help" reaches emit's parser
  // instead of the global one.
  int command_at = 1;
  while (command_at < argc) {
    std::string a = argv[command_at];
    if (a == "--socket") {
      command_at += 2;
    } else if (!a.empty() && a[0] == '-') {
      ++command_at;
    } else {
      break;
    }
  }
  po::options_description global = GlobalOptions();
  po::variables_map vm;
  try {
    std::vector<std::string> head(argv + 1, argv + std::min(command_at, argc));
    po::store(po::command_line_parser(head).options(global).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return UsageError(atraced::DescribeOptionError(e));
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << global;
    return kExitOk;
  }
  if (vm.count("version")) {
    std::cout << VersionLine() << "\n";
    return kExitOk;
  }
  if (command_at >= argc) return UsageError("no command given");
  auto it = Commands().find(argv[command_at]);
  if (it == Commands().end()) {
    std::vector<std::string> names;
    for (const auto& command : Commands()) names.push_back(command.first);
    return UsageError("unknown command '" + TerminalLine(argv[command_at]) + "'" + atraced::DidYouMean(argv[command_at], names));
  }
  Globals g;
  if (vm.count("socket")) g.socket = vm["socket"].as<std::string>();
  return it->second(g, Args(argv + command_at + 1, argv + argc));
}

}  // namespace atracectl
