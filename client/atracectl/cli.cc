#include "cli.h"

#include <cerrno>
#include <iostream>
#include <map>

#include "atraced/base/option_error.h"
#include "parse.h"

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
    "  du       bytes per class and in total\n"
    "  vacuum   apply the aging limits now (--dry-run: only report)\n"
    "\n"
    "Run 'atracectl COMMAND --help' for a command's options.\n"
    "Exit codes: 0 success, 1 the daemon refused or failed, 2 usage error.\n";

using Runner = int (*)(const Globals&, const Args&);

const std::map<std::string, Runner>& Commands() {
  static const std::map<std::string, Runner> kCommands{
      {"emit", RunEmit}, {"status", RunStatus}, {"list", RunList}, {"du", RunDu}, {"vacuum", RunVacuum}};
  return kCommands;
}

po::options_description GlobalOptions() {
  po::options_description global("Global options");
  global.add_options()("help,h", "show this help")("socket", po::value<std::string>(),
                                                   "daemon socket (default: $ATRACED_SOCKET, else the system "
                                                   "unit's socket, else the user unit's)");
  return global;
}

}  // namespace

int UsageError(const std::string& message) {
  std::cerr << "atracectl: " << message << "\n(see 'atracectl --help')\n";
  return kExitUsage;
}

atrace::Client Connect(const Globals& g) {
  atrace::Client::Options o;
  o.socket_path = g.socket;
  std::error_code ec;
  atrace::Client c = atrace::Client::Open(o, ec);
  if (ec) {
    std::cerr << "atracectl: cannot reach the daemon"
              << (g.socket.empty() ? std::string() : " at " + g.socket) << ": "
              << atrace_client_strerror(-ec.value()) << "\n";
  }
  return c;
}

int Fail(const atrace::Client& client, const std::string& what, std::error_code ec) {
  std::cerr << "atracectl: " << what << ": " << atrace_client_strerror(-ec.value());
  std::string message = client ? client.last_message() : std::string();
  if (!message.empty()) std::cerr << " (daemon: " << message << ")";
  std::cerr << "\n";
  return kExitFailed;
}

std::optional<po::variables_map> ParseCommand(const Args& args, const std::string& usage,
                                              po::options_description& options,
                                              const po::positional_options_description& positional,
                                              int* exit_code) {
  options.add_options()("help,h", "show this help");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n" << options;
      *exit_code = kExitOk;
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::too_many_positional_options_error&) {
    *exit_code = UsageError("unexpected argument (this command takes " +
                            std::string(positional.max_total_count() ? "one FILE" : "no arguments") + ")");
    return std::nullopt;
  } catch (const po::error& e) {
    *exit_code = UsageError(atraced::DescribeOptionError(e));
    return std::nullopt;
  }
  return vm;
}

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
  if (command_at >= argc) return UsageError("no command given");
  auto it = Commands().find(argv[command_at]);
  if (it == Commands().end()) return UsageError(std::string("unknown command '") + argv[command_at] + "'");
  Globals g;
  if (vm.count("socket")) g.socket = vm["socket"].as<std::string>();
  return it->second(g, Args(argv + command_at + 1, argv + argc));
}

}  // namespace atracectl
