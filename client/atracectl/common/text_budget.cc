#include "common/text_budget.h"

#include "common/command_line.h"
#include "common/format.h"

namespace po = boost::program_options;

namespace atracectl {

std::string TextBudget::Message(size_t files_total, const std::string& how_to_narrow) const {
  return "stopped at the text bound (--max-text-mib " + std::to_string(total >> 20) + "): " + HumanBytes(used) +
         " of text from " + std::to_string(files_read) + " of " + std::to_string(files_total) +
         " files shown, the rest left out; " + how_to_narrow + ", or raise --max-text-mib (what atracectl holds "
         "grows with it)";
}

void AddTextBudgetOption(po::options_description& options, size_t default_mib) {
  options.add_options()("max-text-mib", po::value<size_t>()->default_value(default_mib),
                        "stop after this many MiB of text from all files together (a small .bin can decode to "
                        "much more text than its size)");
}

bool ReadTextBudget(const po::variables_map& vm, TextBudget* budget, int* exit_code) {
  const size_t mib = vm["max-text-mib"].as<size_t>();
  if (mib == 0 || mib > (size_t{1} << 20)) {
    *exit_code = UsageError("--max-text-mib: give 1 to 1048576");
    return false;
  }
  budget->total = mib << 20;
  return true;
}

}  // namespace atracectl
