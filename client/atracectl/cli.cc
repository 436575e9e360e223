#include "cli.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "atraced/base/nearest_name.h"
#include "atraced/base/option_error.h"
#include "atraced/base/socket_remedy.h"
#include "atraced/proto/wire.h"
#include "escape.h"
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

std::string VersionLine() {
  return std::string("atracectl ") + ATRACED_VERSION + " (protocol " + std::to_string(ATR_VERSION_MAJOR) + "." +
         std::to_string(ATR_VERSION_MINOR) + ")";
}

int UsageError(const std::string& message) {
  std::cerr << "atracectl: " << message << "\n(see 'atracectl --help')\n";
  return kExitUsage;
}

namespace {

// The sockets the library tries, in its order (docs/CLIENT.md): --socket alone, else
// $ATRACED_SOCKET alone, else the system unit's and then the user unit's.
std::vector<std::string> SocketsTried(const Globals& g) {
  if (!g.socket.empty()) return {g.socket};
  if (const char* env = std::getenv("ATRACED_SOCKET"); env != nullptr && *env != '\0') return {env};
  std::vector<std::string> paths{"/run/atraced/atraced.sock"};
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run != nullptr && *run != '\0') {
    paths.push_back(std::string(run) + "/atraced.sock");
  }
  return paths;
}

std::string Joined(const std::vector<std::string>& paths) {
  std::string out;
  for (size_t i = 0; i < paths.size(); ++i) out += (i == 0 ? "" : i + 1 == paths.size() ? " or " : ", ") + paths[i];
  return out;
}

// The first of `paths` that exists: the one whose error the library reported.
std::string FirstPresent(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0) return p;
  }
  return paths.empty() ? std::string() : paths.front();
}

constexpr const char* kStartHint =
    "start it with 'systemctl start atraced.socket' (the system daemon) or 'systemctl --user start "
    "atraced.socket' (your own), or point --socket at a running one";

// What a user reads when the daemon cannot be reached: the path, the cause, what to do.
std::string WhyUnreachable(const Globals& g, int err) {
  const std::vector<std::string> paths = SocketsTried(g);
  const std::string path = FirstPresent(paths);
  switch (err) {
    case ENOENT:
      return "no daemon socket at " + Joined(paths) + ": is atraced running? " + kStartHint;
    case ECONNREFUSED:
      if (std::string not_socket = atraced::DescribeNonSocket(path); !not_socket.empty()) {
        return not_socket + ": point " + (g.socket.empty() ? "ATRACED_SOCKET" : "--socket") +
               " at the daemon's socket (atraced prints it at start-up)";
      }
      return "nothing listens on " + path + " (a daemon that stopped left its socket behind): " + kStartHint;
    case EACCES:
      return "permission denied on " + path + ": " + atraced::SocketAccessRemedy(path);
    case ETIMEDOUT:
      return path + " did not answer in time: the daemon is overloaded or stopped (see 'journalctl -u atraced')";
    default:
      return "cannot reach the daemon at " + Joined(paths) + ": " + atrace_client_strerror(-err);
  }
}

}  // namespace

atrace::Client Connect(const Globals& g, atrace::Client::Options o) {
  o.socket_path = g.socket;
  std::error_code ec;
  atrace::Client c = atrace::Client::Open(o, ec);
  if (ec) std::cerr << "atracectl: " << WhyUnreachable(g, ec.value()) << "\n";
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
