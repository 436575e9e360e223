#include "common/command_line.h"

#include <iostream>

#include "atraced/base/option_error.h"
#include "atraced/proto/wire.h"

namespace po = boost::program_options;

namespace atracectl {

std::string VersionLine() {
  return std::string("atracectl ") + ATRACED_VERSION + " (protocol " + std::to_string(ATR_VERSION_MAJOR) + "." +
         std::to_string(ATR_VERSION_MINOR) + ")";
}

int UsageError(const std::string& message) {
  std::cerr << "atracectl: " << message << "\n(see 'atracectl --help')\n";
  return kExitUsage;
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

}  // namespace atracectl
